import Foundation
import Testing

import HeraldIO
@testable import HeraldServices

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

@Suite struct CryptoVectorTests {
    @Test func sha1MatchesFIPSVectors() {
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(hex(SHA1.hash(Array(long.utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func hmacSHA1MatchesRFC2202() {
        #expect(hex(HMACSHA1.authenticationCode(key: "Jefe", message: "what do ya want for nothing?"))
            == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(hex(HMACSHA1.authenticationCode(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
            == "b617318655057264e28bc0b6fb378c8ef146be00")
        let longKey = [UInt8](repeating: 0xaa, count: 80)
        let message = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(hex(HMACSHA1.authenticationCode(key: longKey, message: message)) == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func hmacSHA256FromTheSystemLibraryMatchesRFC4231() throws {
        let hmac = try HMACSHA256()
        // RFC 4231 test cases 1, 2, 4 and 6 (a key longer than the block).
        #expect(hex(hmac.authenticationCode(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(hex(hmac.authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(hex(hmac.authenticationCode(key: Array(1...25), message: [UInt8](repeating: 0xcd, count: 50)))
            == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
        #expect(hex(hmac.authenticationCode(key: [UInt8](repeating: 0xaa, count: 131),
                                            message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(hex(hmac.authenticationCode(key: [], message: [])) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2]))
    }

    @Test func base64RoundTripsAndMatchesRFC4648() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
        #expect(Base64.decode("ab$c") == nil)
    }

    @Test func percentEncodingFollowsRFC3986() {
        #expect(PercentEncoding.encode("Hello Ladies + Gentlemen, a signed OAuth request!")
            == "Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21")
        #expect(PercentEncoding.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(PercentEncoding.encode("日本 ☃*'()") == "%E6%97%A5%E6%9C%AC%20%E2%98%83%2A%27%28%29")
        #expect(PercentEncoding.decode("%E6%97%A5+x", plusAsSpace: true) == "日 x")
        #expect(PercentEncoding.decode("%E") == nil)
    }
}
