import HeraldIO
import Testing

/// Ed25519 from the system's libcrypto: RFC 8032's known answers.
@Suite struct Ed25519SignerTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func rfc8032TestVectorsAreReproduced() throws {
        // RFC 8032 §7.1, TEST 1 (empty message) and TEST 2 (one byte).
        let first = try Ed25519Signer(seed: Self.bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        #expect(first.publicKey == Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        #expect(try first.sign([]) == Self.bytes(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"))
        let second = try Ed25519Signer(seed: Self.bytes("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"))
        #expect(second.publicKey == Self.bytes("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"))
        #expect(try second.sign([0x72]) == Self.bytes(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"))
    }

    @Test func aSeedOfTheWrongLengthIsRefused() {
        #expect(throws: SystemCryptoError.self) { try Ed25519Signer(seed: [1, 2, 3]) }
    }
}
