#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ed25519 signatures (RFC 8032) from the system's OpenSSL `libcrypto`, loaded at run time, never
/// written here. Checked against RFC 8032's first test vector when first used, so nothing is
/// ever signed by a library that answers wrong.
///
/// `Sendable`: it holds the 32-byte seed and the public key, both immutable; each signature
/// makes its own OpenSSL objects.
struct Ed25519Signer: Sendable, CustomStringConvertible {
    /// The 32-byte public key.
    let publicKey: [UInt8]
    private let seed: [UInt8]

    /// The signer for a 32-byte seed (the private key of RFC 8032).
    /// - Throws: ``NATSError`` `.connectionFailed` when libcrypto is missing or wrong, or the seed
    ///   is not 32 bytes.
    init(seed: [UInt8]) throws(NATSError) {
        guard seed.count == 32 else { throw .connectionFailed("an Ed25519 seed has 32 bytes, not \(seed.count)") }
        let library = try Self.checkedLibrary.get()
        guard let publicKey = library.publicKey(seed: seed) else { throw .connectionFailed("libcrypto could not make an Ed25519 key") }
        self.seed = seed
        self.publicKey = publicKey
    }

    /// The 64-byte signature of `message`.
    func sign(_ message: [UInt8]) throws(NATSError) -> [UInt8] {
        let library = try Self.checkedLibrary.get()
        guard let signature = library.sign(message, seed: seed) else { throw .connectionFailed("libcrypto could not sign with Ed25519") }
        return signature
    }

    /// Never shows the seed.
    var description: String { "Ed25519Signer(public key: \(publicKey.count) bytes)" }

    private static let checkedLibrary: Result<LibCrypto, NATSError> = {
        do throws(NATSError) {
            let library = try LibCrypto.load()
            // RFC 8032, section 7.1, TEST 1: the empty message.
            let seed = bytes(fromHex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
            let publicKey = bytes(fromHex: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
            let signature = bytes(fromHex: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                                  + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
            guard library.publicKey(seed: seed) == publicKey, library.sign([], seed: seed) == signature else {
                throw .connectionFailed("the system's Ed25519 does not give RFC 8032's known answer; it is not used")
            }
            return .success(library)
        } catch {
            return .failure(error)
        }
    }()

    static func bytes(fromHex text: String) -> [UInt8] {
        var result: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8 = switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
            default: character - UInt8(ascii: "a") + 10
            }
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return result
    }
}

/// The libcrypto functions Ed25519 needs.
private struct LibCrypto: Sendable {
    private typealias NewRawPrivateKey = @convention(c) (Int32, OpaquePointer?, UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    private typealias GetRawPublicKey = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32
    private typealias FreeKey = @convention(c) (OpaquePointer?) -> Void
    private typealias NewContext = @convention(c) () -> OpaquePointer?
    private typealias FreeContext = @convention(c) (OpaquePointer?) -> Void
    private typealias SignInit = @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    private typealias Sign = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int) -> Int32

    /// `EVP_PKEY_ED25519` (`NID_ED25519`).
    private static let ed25519: Int32 = 1087

    private let newRawPrivateKey: NewRawPrivateKey
    private let getRawPublicKey: GetRawPublicKey
    private let freeKey: FreeKey
    private let newContext: NewContext
    private let freeContext: FreeContext
    private let signInit: SignInit
    private let signFunction: Sign

    static func load() throws(NATSError) -> LibCrypto {
        var errors: [String] = []
        for name in ["libcrypto.so.3", "libcrypto.so", "/usr/lib/libcrypto.dylib"] {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                errors.append(dlerror().map { String(cString: $0) } ?? name)
                continue
            }
            let names = ["EVP_PKEY_new_raw_private_key", "EVP_PKEY_get_raw_public_key", "EVP_PKEY_free", "EVP_MD_CTX_new",
                         "EVP_MD_CTX_free", "EVP_DigestSignInit", "EVP_DigestSign"]
            let symbols = names.map { dlsym(handle, $0) }
            guard symbols.allSatisfy({ $0 != nil }) else {
                errors.append("\(name) lacks \(zip(names, symbols).filter { $0.1 == nil }.map(\.0).joined(separator: ", "))")
                continue
            }
            return LibCrypto(newRawPrivateKey: unsafeBitCast(symbols[0], to: NewRawPrivateKey.self),
                             getRawPublicKey: unsafeBitCast(symbols[1], to: GetRawPublicKey.self),
                             freeKey: unsafeBitCast(symbols[2], to: FreeKey.self),
                             newContext: unsafeBitCast(symbols[3], to: NewContext.self),
                             freeContext: unsafeBitCast(symbols[4], to: FreeContext.self),
                             signInit: unsafeBitCast(symbols[5], to: SignInit.self),
                             signFunction: unsafeBitCast(symbols[6], to: Sign.self))
        }
        throw .connectionFailed("Ed25519 (NATS NKeys) needs OpenSSL's libcrypto, which could not be loaded: \(errors.joined(separator: "; "))")
    }

    func publicKey(seed: [UInt8]) -> [UInt8]? {
        guard let key = newRawPrivateKey(Self.ed25519, nil, seed, seed.count) else { return nil }
        defer { freeKey(key) }
        var publicKey = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard getRawPublicKey(key, &publicKey, &length) == 1, length == 32 else { return nil }
        return publicKey
    }

    func sign(_ message: [UInt8], seed: [UInt8]) -> [UInt8]? {
        guard let key = newRawPrivateKey(Self.ed25519, nil, seed, seed.count) else { return nil }
        defer { freeKey(key) }
        guard let context = newContext() else { return nil }
        defer { freeContext(context) }
        guard signInit(context, nil, nil, nil, key) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let signed = message.withUnsafeBufferPointer { signFunction(context, &signature, &length, $0.baseAddress, $0.count) }
        guard signed == 1, length == 64 else { return nil }
        return signature
    }
}
