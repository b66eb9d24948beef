import Foundation
@testable import HeraldNATS
import HeraldTestSupport
import Testing

/// Credentials as production servers want them: a token, a user and password, an NKey and a
/// `.creds` file (JWT + NKey), each against a real nats-server configured for it, the wrong
/// ones refused with the server's own words. Keys and JWTs come from the official libraries
/// (``NATSAccounts``).
@Suite(.timeLimit(.minutes(5)))
struct NATSAuthenticationTests {
    /// The same seed through nkeys (Go) gave this public key and this signature of `nonce-XYZ`.
    @Test func anNKeyGivesThePublicKeyAndSignatureOfTheOfficialLibrary() throws {
        let pair = try NATSNKeyPair(seed: "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA")
        #expect(pair.publicKey == "UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME")
        #expect(try pair.testSignature("nonce-XYZ") == "TxEbUnDcC1BSjAX8cPR5oUtFnXXQGt3LQ697KT_5yYBRGZpgOPGnWEsekNoOlEgs7Xoc9GxWsQi6wg5cUU1FDg")
        #expect(!"\(pair)".contains("SUAA"))
    }

    @Test(arguments: [
        ("SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVDJA", "checksum"),  // a character changed
        ("SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJB", "base32"),  // bits past the last byte
        ("UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME", "not a seed"),  // a public key
        ("SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVC1A", "base32"),
        ("", "base32"),
    ])
    func aBadSeedIsRefusedSayingWhyWithoutShowingIt(_ seed: String, _ why: String) {
        do {
            _ = try NATSNKeyPair(seed: seed)
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains(why), "\(error.message)")
            #expect(seed.isEmpty || !error.message.contains(seed))
        }
    }

    @Test func aCredsFileWithoutItsSeedOrItsJWTIsRefusedNamingTheBlock() {
        let jwt = "-----BEGIN NATS USER JWT-----\neyJ0.eyJ1.c2ln\n------END NATS USER JWT------\n"
        let seed = "-----BEGIN USER NKEY SEED-----\nSUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA\n------END USER NKEY SEED------\n"
        #expect(throws: NATSError.self) { try NATSUserCredentials(parsing: jwt) }
        #expect(throws: NATSError.self) { try NATSUserCredentials(parsing: seed) }
        #expect(throws: NATSError.self) { try NATSUserCredentials(parsing: jwt.replacingOccurrences(of: "eyJ0.eyJ1.c2ln", with: "nojwt") + seed) }
        let both = try? NATSUserCredentials(parsing: jwt + "\n*** IMPORTANT ***\n" + seed)
        #expect(both?.jwt == "eyJ0.eyJ1.c2ln")
        #expect(both?.keyPair.publicKey == "UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME")
        #expect(throws: NATSError.self) { try NATSUserCredentials(contentsOf: "/nonexistent/user.creds") }
    }

    @Test func aTokenServerTakesTheRightTokenAndRefusesAWrongOne() async throws {
        let server = try await Self.server(configuration: "authorization { token: \"s3cret-token\" }")
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "auth")
        options.token = "s3cret-token"
        try await Self.roundTrip(options)
        options.token = "wrong"
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
    }

    @Test func aUserAndPasswordServerTakesTheRightPasswordAndRefusesAWrongOne() async throws {
        let server = try await Self.server(configuration: "authorization { users = [ { user: herald, password: \"pa55-word\" } ] }")
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "auth")
        options.user = "herald"
        options.password = "pa55-word"
        try await Self.roundTrip(options)
        options.password = "wrong"
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
    }

    @Test func anNKeyServerTakesItsUserAndRefusesAnUnknownKey() async throws {
        guard !NATSAccounts.skipped else { return }
        let directory = try Self.temporaryDirectory()
        let accounts = try await NATSAccounts.make(in: directory)
        let server = try await Self.server(configuration: "authorization { users = [ { nkey: \(accounts.nkeyUserPublicKey) } ] }")
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "auth")
        options.nkey = try NATSNKeyPair(seed: accounts.nkeyUserSeed)
        try await Self.roundTrip(options)
        options.nkey = try NATSNKeyPair(seed: "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA")
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
        // Without a key, a server that wants one says so too.
        options.nkey = nil
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
    }

    @Test func anOperatorModeServerTakesAUsersCredsAndRefusesAnExpiredOrUnknownUser() async throws {
        guard !NATSAccounts.skipped else { return }
        let directory = try Self.temporaryDirectory()
        let accounts = try await NATSAccounts.make(in: directory)
        let server = try await Self.server(configuration: accounts.operatorModeConfiguration)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "auth")
        options.userCredentials = try NATSUserCredentials(contentsOf: accounts.userCreds)
        try await Self.roundTrip(options)
        options.userCredentials = try NATSUserCredentials(contentsOf: accounts.expiredCreds)
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
        options.userCredentials = try NATSUserCredentials(contentsOf: accounts.strangerCreds)
        try await RefusalCheck.expectRefusal(options, saying: "Authorization Violation")
    }

    @Test func keysForAServerThatSendsNoNonceAreAClearError() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "auth")
        options.nkey = try NATSNKeyPair(seed: "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA")
        try await RefusalCheck.expectRefusal(options, saying: "sent no nonce")
    }

    // MARK: - Helpers

    private static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static func server(configuration: String) async throws -> NATSServerProcess {
        let file = try temporaryDirectory().appendingPathComponent("server.conf")
        try Data(configuration.utf8).write(to: file)
        return try await NATSServerProcess.start(jetStream: false, arguments: ["-c", file.path])
    }

    /// Connects, and a message goes round through the server.
    private static func roundTrip(_ options: NATSConnectionOptions) async throws {
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        let subscription = try connection.subscribe("auth.check")
        try await connection.flush()
        try connection.publish("auth.check", payload: Array("hello".utf8))
        var iterator = subscription.makeAsyncIterator()
        let message = await iterator.next()
        #expect(message.map { Array($0.payload) } == Array("hello".utf8))
        await connection.close()
    }
}

extension NATSNKeyPair {
    /// The signature `CONNECT` would carry for `nonce`.
    func testSignature(_ nonce: String) throws -> String { try signNonce(nonce) }
}
