#if canImport(CommonCrypto)
import CommonCrypto
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// HMAC-SHA256 (RFC 2104, FIPS 180-4) from the system's own library, never written here: on
/// Apple platforms CommonCrypto, elsewhere OpenSSL's `libcrypto` (the one the toolchain's
/// Foundation links), loaded at run time by ``OpenSSLLibrary`` so the package keeps no
/// link-time dependency.
///
/// `Sendable`: it holds only C function pointers, which are immutable after loading.
public struct HMACSHA256: Sendable {
    /// The code's length in bytes.
    public static let byteCount = 32

    #if !canImport(CommonCrypto)
    private typealias DigestFunction = @convention(c) () -> OpaquePointer?
    private typealias HMACFunction = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int,
                                                     UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<UInt8>?
    private let digest: DigestFunction
    private let hmac: HMACFunction

    private static let loaded: Result<(DigestFunction, HMACFunction), SystemCryptoError> = Result { () throws(SystemCryptoError) in
        (try OpenSSLLibrary.function("EVP_sha256", in: .crypto, as: DigestFunction.self),
         try OpenSSLLibrary.function("HMAC", in: .crypto, as: HMACFunction.self))
    }
    #endif

    /// Loads the system's implementation and checks it against RFC 4231's second test case;
    /// throws when there is none or it answers wrong (a library without SHA-256, or a
    /// configuration that disables it), so that nothing is ever signed with a code it did not
    /// compute.
    public init() throws(SystemCryptoError) {
        #if !canImport(CommonCrypto)
        switch Self.loaded {
        case .success(let functions): (digest, hmac) = functions
        case .failure(let error): throw error
        }
        #endif
        let known: [UInt8] = [0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                              0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43]
        guard authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)) == known else {
            throw SystemCryptoError("the system's HMAC-SHA256 does not give RFC 4231's known answer; it is not used")
        }
    }

    /// The 32-byte authentication code of `message` under `key`; empty if the library failed
    /// (so a comparison with any received code fails: it never yields a predictable code).
    public func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Self.byteCount)
        #if canImport(CommonCrypto)
        CCHmac(CCHmacAlgorithm(kCCHmacAlgSHA256), key, key.count, message, message.count, &code)
        #else
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                code.withUnsafeMutableBufferPointer { code in
                    hmac(digest(), key.baseAddress, Int32(clamping: key.count), message.baseAddress, message.count, code.baseAddress, &length) != nil
                }
            }
        }
        guard done, length == UInt32(Self.byteCount) else { return [] }
        #endif
        return code
    }

    /// Whether `a` and `b` are equal, in a time that does not depend on where they differ
    /// (for comparing a received code with the expected one).
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
