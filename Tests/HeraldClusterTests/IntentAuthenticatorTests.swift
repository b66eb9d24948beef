import HeraldCluster
import Testing

@Suite struct IntentAuthenticatorTests {
    private let secret = String(repeating: "0123456789abcdef", count: 2)

    private func message(subject: String = "herald-posts.todo", key: String = "todo:1", body: String = #"{"text":"hi"}"#) -> ClusterMessage {
        ClusterMessage(subject: subject, headers: [.init("Nats-Msg-Id", key), .init("Herald-Node", "a")], payload: Array(body.utf8))
    }

    @Test func aSignedMessageIsAuthenticUnderTheSameSecretOnly() throws {
        let signer = try IntentAuthenticator(secret: secret)
        let signed = signer.signed(message())
        #expect(signed.header(IntentAuthenticator.header)?.hasPrefix("v1=") == true)
        #expect(signer.isAuthentic(signed))
        #expect(try IntentAuthenticator(secret: secret).isAuthentic(signed))
        #expect(!(try IntentAuthenticator(secret: secret + "x")).isAuthentic(signed))
        #expect(!signer.isAuthentic(message()))
    }

    @Test func changingTheSubjectTheKeyOrTheBodyBreaksTheSignature() throws {
        let signer = try IntentAuthenticator(secret: secret)
        let signature = try #require(signer.signed(message()).header(IntentAuthenticator.header))
        func with(_ message: ClusterMessage) -> ClusterMessage {
            var message = message
            message.headers.append(.init(IntentAuthenticator.header, signature))
            return message
        }
        #expect(signer.isAuthentic(with(message())))
        #expect(!signer.isAuthentic(with(message(subject: "herald-posts.other"))))
        #expect(!signer.isAuthentic(with(message(key: "todo:2"))))
        #expect(!signer.isAuthentic(with(message(body: #"{"text":"ho"}"#))))
        // Bytes moved from one field to the next keep the concatenation but not the fields.
        #expect(!signer.isAuthentic(with(message(subject: "herald-posts.tod", key: "otodo:1"))))
    }

    @Test func aMalformedSignatureHeaderIsNotAuthenticAndNeverTraps() throws {
        let signer = try IntentAuthenticator(secret: secret)
        let valid = try #require(signer.signed(message()).header(IntentAuthenticator.header))
        for value in ["", "v1=", "v2=" + valid.dropFirst(3), "v1=zz" + valid.dropFirst(5), String(valid.dropLast()), valid + "00", "v1=\u{1F600}"] {
            var forged = message()
            forged.headers.append(.init(IntentAuthenticator.header, value))
            #expect(!signer.isAuthentic(forged), "\(value)")
        }
        // A forged header beside a valid one does not count: signing replaces, checking reads the first.
        var doubled = signer.signed(message())
        doubled.headers.insert(.init(IntentAuthenticator.header, "v1=" + String(repeating: "0", count: 64)), at: 0)
        #expect(!signer.isAuthentic(doubled))
        #expect(signer.isAuthentic(signer.signed(doubled)))
    }

    @Test func theVerdictTellsUnsignedForgedAndAnotherSecretApartWithoutShowingTheSecret() throws {
        let signer = try IntentAuthenticator(secret: secret)
        let other = try IntentAuthenticator(secret: String(repeating: "z", count: 40))
        #expect(signer.verdict(signer.signed(message())) == .authentic)
        #expect(signer.verdict(message()) == .unsigned)
        #expect(signer.verdict(other.signed(message())) == .otherSecret(keyID: other.keyID))
        var altered = signer.signed(message())
        altered.payload = Array(#"{"text":"ho"}"#.utf8)
        #expect(signer.verdict(altered) == .forged)
        #expect(signer.keyID != other.keyID && signer.keyID.count == 16)
        #expect(!signer.keyID.contains("0123456789abcdef") && !(signer.signed(message()).header(IntentAuthenticator.header) ?? "").contains(secret))
    }
}
