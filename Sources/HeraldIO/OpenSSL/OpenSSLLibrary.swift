#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's OpenSSL (`libcrypto` and `libssl`, the ones the toolchain's Foundation links),
/// loaded once at run time with `dlopen`, so the package keeps no link-time dependency; the one
/// loader of HMAC, TLS and signatures.
///
/// `Sendable`: it holds the two library handles, immutable after loading.
struct OpenSSLLibrary: @unchecked Sendable {
    // @unchecked: `dlopen` handles are opaque pointers never written after loading, and
    // `dlsym` on them is thread-safe.
    enum Part: String {
        case crypto = "libcrypto"
        case ssl = "libssl"
    }

    private let crypto: UnsafeMutableRawPointer
    private let ssl: UnsafeMutableRawPointer?
    private let sslFailure: String?

    /// The libraries tried, in order (the versioned name first: the unversioned link exists only
    /// with the -dev package).
    static let libraryNames: [Part: [String]] = [
        .crypto: ["libcrypto.so.3", "libcrypto.so"],
        .ssl: ["libssl.so.3", "libssl.so"],
    ]

    /// The loaded libraries, or why `libcrypto` could not be loaded (`libssl` is looked up only
    /// when a TLS symbol is asked for).
    static let shared: Result<OpenSSLLibrary, SystemCryptoError> = {
        switch open(.crypto) {
        case .failure(let error):
            return .failure(error)
        case .success(let crypto):
            switch open(.ssl) {
            case .success(let ssl): return .success(OpenSSLLibrary(crypto: crypto, ssl: ssl, sslFailure: nil))
            case .failure(let error): return .success(OpenSSLLibrary(crypto: crypto, ssl: nil, sslFailure: error.description))
            }
        }
    }()

    private static func open(_ part: Part) -> Result<UnsafeMutableRawPointer, SystemCryptoError> {
        var errors: [String] = []
        for name in libraryNames[part] ?? [] {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) { return .success(handle) }
            errors.append(dlerror().map { String(cString: $0) } ?? name)
        }
        return .failure(SystemCryptoError("OpenSSL's \(part.rawValue) could not be loaded: \(errors.joined(separator: "; "))"))
    }

    /// The function `name` of `part`, as the C function type `T`.
    /// - Throws: naming the library and the symbol when it is missing.
    func function<T>(_ name: String, in part: Part, as type: T.Type = T.self) throws(SystemCryptoError) -> T {
        let handle: UnsafeMutableRawPointer
        switch part {
        case .crypto:
            handle = crypto
        case .ssl:
            guard let ssl else { throw SystemCryptoError(sslFailure ?? "OpenSSL's libssl could not be loaded") }
            handle = ssl
        }
        guard let symbol = dlsym(handle, name) else {
            throw SystemCryptoError("OpenSSL's \(part.rawValue) has no \(name)")
        }
        return unsafeBitCast(symbol, to: type)
    }

    /// ``function(_:in:as:)`` of the shared library.
    static func function<T>(_ name: String, in part: Part, as type: T.Type = T.self) throws(SystemCryptoError) -> T {
        try shared.get().function(name, in: part, as: type)
    }
}
