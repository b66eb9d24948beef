#if canImport(CommonCrypto)
import CommonCrypto
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// HMAC-SHA256 (RFC 2104, FIPS 180-4) from the system's own library, never written here: on
/// Apple platforms CommonCrypto, elsewhere OpenSSL's `libcrypto` (the one the toolchain's
/// Foundation links), loaded at run time so the package keeps no link-time dependency.
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

    /// The libraries tried, in order (the versioned name first: the unversioned link exists only
    /// with the -dev package).
    static let libraryNames = ["libcrypto.so.3", "libcrypto.so"]

    private static let loaded: Result<(DigestFunction, HMACFunction), SystemCryptoError> = {
        var errors: [String] = []
        for name in libraryNames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                errors.append(dlerror().map { String(cString: $0) } ?? name)
                continue
            }
            guard let digest = dlsym(handle, "EVP_sha256"), let hmac = dlsym(handle, "HMAC") else {
                errors.append("\(name) has no EVP_sha256 or HMAC")
                continue
            }
            return .success((unsafeBitCast(digest, to: DigestFunction.self), unsafeBitCast(hmac, to: HMACFunction.self)))
        }
        return .failure(SystemCryptoError("HMAC-SHA256 needs OpenSSL's libcrypto, which could not be loaded: \(errors.joined(separator: "; "))"))
    }()
    #endif

    /// Loads the system's implementation; throws when there is none.
    public init() throws(SystemCryptoError) {
        #if !canImport(CommonCrypto)
        switch Self.loaded {
        case .success(let functions): (digest, hmac) = functions
        case .failure(let error): throw error
        }
        #endif
    }

    /// The 32-byte authentication code of `message` under `key`.
    public func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Self.byteCount)
        #if canImport(CommonCrypto)
        CCHmac(CCHmacAlgorithm(kCCHmacAlgSHA256), key, key.count, message, message.count, &code)
        #else
        var length: UInt32 = 0
        key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                code.withUnsafeMutableBufferPointer { code in
                    _ = hmac(digest(), key.baseAddress, Int32(key.count), message.baseAddress, message.count, code.baseAddress, &length)
                }
            }
        }
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
