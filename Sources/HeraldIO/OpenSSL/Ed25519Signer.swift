/// Ed25519 signatures (RFC 8032) from the system's OpenSSL `libcrypto`, loaded at run time by
/// ``OpenSSLLibrary``; never written here. For NATS NKey credentials, whose seed is a 32-byte
/// Ed25519 private key.
///
/// `init` checks the library against RFC 8032's test vector 1 before anything is signed.
/// `Sendable`: it holds the 32-byte seed and C function pointers, all immutable.
public struct Ed25519Signer: Sendable {
    /// A signature's length in bytes.
    public static let signatureByteCount = 64
    /// A seed's (private key's) and a public key's length in bytes.
    public static let keyByteCount = 32

    private typealias Pointer = OpaquePointer
    private struct Functions: Sendable {
        let newPrivateKey: @convention(c) (Int32, Pointer?, UnsafePointer<UInt8>?, Int) -> Pointer?
        let freeKey: @convention(c) (Pointer?) -> Void
        let rawPublicKey: @convention(c) (Pointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32
        let newContext: @convention(c) () -> Pointer?
        let freeContext: @convention(c) (Pointer?) -> Void
        let signInit: @convention(c) (Pointer?, UnsafeMutablePointer<Pointer?>?, Pointer?, Pointer?, Pointer?) -> Int32
        let sign: @convention(c) (Pointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int) -> Int32
    }

    private static let loaded: Result<Functions, SystemCryptoError> = Result { () throws(SystemCryptoError) in
        let library = try OpenSSLLibrary.shared.get()
        return Functions(
            newPrivateKey: try library.function("EVP_PKEY_new_raw_private_key", in: .crypto),
            freeKey: try library.function("EVP_PKEY_free", in: .crypto),
            rawPublicKey: try library.function("EVP_PKEY_get_raw_public_key", in: .crypto),
            newContext: try library.function("EVP_MD_CTX_new", in: .crypto),
            freeContext: try library.function("EVP_MD_CTX_free", in: .crypto),
            signInit: try library.function("EVP_DigestSignInit", in: .crypto),
            sign: try library.function("EVP_DigestSign", in: .crypto))
    }

    /// RFC 8032 §7.1, test 1: the seed, its public key and the signature of the empty message.
    static let knownSeed = bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let knownPublicKey = bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    static let knownSignature = bytes(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")

    private let functions: Functions
    private let seed: [UInt8]
    /// The 32-byte public key of the seed.
    public let publicKey: [UInt8]

    /// A signer with the 32-byte `seed` (the Ed25519 private key).
    /// - Throws: ``SystemCryptoError`` when the seed is not 32 bytes, libcrypto cannot be loaded
    ///   or has no Ed25519, or it does not give RFC 8032's known answer.
    public init(seed: [UInt8]) throws(SystemCryptoError) {
        guard seed.count == Self.keyByteCount else {
            throw SystemCryptoError("an Ed25519 seed is \(Self.keyByteCount) bytes, not \(seed.count)")
        }
        let functions = try Self.loaded.get()
        guard try Self.publicKey(of: Self.knownSeed, functions) == Self.knownPublicKey,
              try Self.sign([], seed: Self.knownSeed, functions) == Self.knownSignature else {
            throw SystemCryptoError("the system's Ed25519 does not give RFC 8032's known answer; it is not used")
        }
        self.functions = functions
        self.seed = seed
        self.publicKey = try Self.publicKey(of: seed, functions)
    }

    /// The 64-byte signature of `message`.
    /// - Throws: ``SystemCryptoError`` when OpenSSL fails (it never returns a partial signature).
    public func sign(_ message: [UInt8]) throws(SystemCryptoError) -> [UInt8] {
        try Self.sign(message, seed: seed, functions)
    }

    private static func withKey<T>(_ seed: [UInt8], _ functions: Functions,
                                   _ body: (Pointer) throws(SystemCryptoError) -> T) throws(SystemCryptoError) -> T {
        let ed25519: Int32 = 1087  // EVP_PKEY_ED25519 (NID_ED25519)
        guard let key = seed.withUnsafeBufferPointer({ functions.newPrivateKey(ed25519, nil, $0.baseAddress, $0.count) }) else {
            throw SystemCryptoError("OpenSSL's libcrypto refused the Ed25519 key (EVP_PKEY_new_raw_private_key)")
        }
        defer { functions.freeKey(key) }
        return try body(key)
    }

    private static func publicKey(of seed: [UInt8], _ functions: Functions) throws(SystemCryptoError) -> [UInt8] {
        try withKey(seed, functions) { key throws(SystemCryptoError) in
            var output = [UInt8](repeating: 0, count: keyByteCount)
            var length = output.count
            guard functions.rawPublicKey(key, &output, &length) == 1, length == keyByteCount else {
                throw SystemCryptoError("OpenSSL's libcrypto gave no Ed25519 public key (EVP_PKEY_get_raw_public_key)")
            }
            return output
        }
    }

    private static func sign(_ message: [UInt8], seed: [UInt8], _ functions: Functions) throws(SystemCryptoError) -> [UInt8] {
        try withKey(seed, functions) { key throws(SystemCryptoError) in
            guard let context = functions.newContext() else { throw SystemCryptoError("OpenSSL's libcrypto has no memory for a signature") }
            defer { functions.freeContext(context) }
            guard functions.signInit(context, nil, nil, nil, key) == 1 else {
                throw SystemCryptoError("OpenSSL's libcrypto cannot sign with Ed25519 (EVP_DigestSignInit)")
            }
            var signature = [UInt8](repeating: 0, count: signatureByteCount)
            var length = signature.count
            let signed = message.withUnsafeBufferPointer { functions.sign(context, &signature, &length, $0.baseAddress, $0.count) }
            guard signed == 1, length == signatureByteCount else {
                throw SystemCryptoError("OpenSSL's libcrypto failed to sign (EVP_DigestSign)")
            }
            return signature
        }
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }
}
