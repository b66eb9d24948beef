#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HMAC-SHA256 for the webhook receiver's signature check, from OpenSSL's `libcrypto` loaded
/// at run time (never written here). The sandbox keeps its own loader rather than importing
/// the client's module, as it keeps its own SHA-1: the check it makes must not be the sender's
/// code mirrored. Nil when the library cannot be loaded.
enum SandboxHMACSHA256 {
    private typealias DigestFunction = @convention(c) () -> OpaquePointer?
    private typealias HMACFunction = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int,
                                                     UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<UInt8>?

    // C function pointers are immutable, so the loaded pair is Sendable.
    private static let functions: (DigestFunction, HMACFunction)? = {
        for name in ["libcrypto.so.3", "libcrypto.so", "/usr/lib/libcrypto.dylib"] {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL),
                  let digest = dlsym(handle, "EVP_sha256"), let hmac = dlsym(handle, "HMAC") else { continue }
            return (unsafeBitCast(digest, to: DigestFunction.self), unsafeBitCast(hmac, to: HMACFunction.self))
        }
        return nil
    }()

    /// The 32-byte code of `message` under `key`; nil without the library.
    static func code(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        guard let (digest, hmac) = functions else { return nil }
        var code = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                code.withUnsafeMutableBufferPointer { code in
                    hmac(digest(), key.baseAddress, Int32(clamping: key.count), message.baseAddress, message.count, code.baseAddress, &length) != nil
                }
            }
        }
        return done && length == 32 ? code : nil
    }
}
