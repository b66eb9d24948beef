/// The libssl and libcrypto functions TLS uses, looked up once by ``OpenSSLLibrary``.
///
/// `Sendable`: C function pointers, immutable after loading.
struct TLSFunctions: Sendable {
    typealias Pointer = OpaquePointer
    let clientMethod: @convention(c) () -> Pointer?
    let contextNew: @convention(c) (Pointer?) -> Pointer?
    let contextFree: @convention(c) (Pointer?) -> Void
    let contextDefaultPaths: @convention(c) (Pointer?) -> Int32
    let contextLoadLocations: @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let contextSetVerify: @convention(c) (Pointer?, Int32, OpaquePointer?) -> Void
    let contextControl: @convention(c) (Pointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let contextSetOptions: @convention(c) (Pointer?, UInt64) -> UInt64
    let contextUseChainFile: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let contextUseKeyFile: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32) -> Int32
    let contextCheckKey: @convention(c) (Pointer?) -> Int32
    let new: @convention(c) (Pointer?) -> Pointer?
    let free: @convention(c) (Pointer?) -> Void
    let setDescriptor: @convention(c) (Pointer?, Int32) -> Int32
    let control: @convention(c) (Pointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let setHost: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let parameters: @convention(c) (Pointer?) -> Pointer?
    let setIPAddress: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let connect: @convention(c) (Pointer?) -> Int32
    let read: @convention(c) (Pointer?, UnsafeMutableRawPointer?, Int32) -> Int32
    let write: @convention(c) (Pointer?, UnsafeRawPointer?, Int32) -> Int32
    let shutdown: @convention(c) (Pointer?) -> Int32
    let getError: @convention(c) (Pointer?, Int32) -> Int32
    let verifyResult: @convention(c) (Pointer?) -> Int
    let verifyErrorText: @convention(c) (Int) -> UnsafePointer<CChar>?
    let errorPop: @convention(c) () -> UInt
    let errorText: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void
    let errorClear: @convention(c) () -> Void

    /// The functions, or why they cannot be had (naming the library and the symbol).
    static let shared: Result<TLSFunctions, SystemCryptoError> = Result { () throws(SystemCryptoError) in
        try TLSFunctions(OpenSSLLibrary.shared.get())
    }

    private init(_ library: OpenSSLLibrary) throws(SystemCryptoError) {
        clientMethod = try library.function("TLS_client_method", in: .ssl)
        contextNew = try library.function("SSL_CTX_new", in: .ssl)
        contextFree = try library.function("SSL_CTX_free", in: .ssl)
        contextDefaultPaths = try library.function("SSL_CTX_set_default_verify_paths", in: .ssl)
        contextLoadLocations = try library.function("SSL_CTX_load_verify_locations", in: .ssl)
        contextSetVerify = try library.function("SSL_CTX_set_verify", in: .ssl)
        contextControl = try library.function("SSL_CTX_ctrl", in: .ssl)
        contextSetOptions = try library.function("SSL_CTX_set_options", in: .ssl)
        contextUseChainFile = try library.function("SSL_CTX_use_certificate_chain_file", in: .ssl)
        contextUseKeyFile = try library.function("SSL_CTX_use_PrivateKey_file", in: .ssl)
        contextCheckKey = try library.function("SSL_CTX_check_private_key", in: .ssl)
        new = try library.function("SSL_new", in: .ssl)
        free = try library.function("SSL_free", in: .ssl)
        setDescriptor = try library.function("SSL_set_fd", in: .ssl)
        control = try library.function("SSL_ctrl", in: .ssl)
        setHost = try library.function("SSL_set1_host", in: .ssl)
        parameters = try library.function("SSL_get0_param", in: .ssl)
        setIPAddress = try library.function("X509_VERIFY_PARAM_set1_ip_asc", in: .crypto)
        connect = try library.function("SSL_connect", in: .ssl)
        read = try library.function("SSL_read", in: .ssl)
        write = try library.function("SSL_write", in: .ssl)
        shutdown = try library.function("SSL_shutdown", in: .ssl)
        getError = try library.function("SSL_get_error", in: .ssl)
        verifyResult = try library.function("SSL_get_verify_result", in: .ssl)
        verifyErrorText = try library.function("X509_verify_cert_error_string", in: .crypto)
        errorPop = try library.function("ERR_get_error", in: .crypto)
        errorText = try library.function("ERR_error_string_n", in: .crypto)
        errorClear = try library.function("ERR_clear_error", in: .crypto)
    }

    /// The oldest error on this thread's OpenSSL error queue, as text (the queue is emptied).
    func takeErrors() -> String? {
        var texts: [String] = []
        while case let code = errorPop(), code != 0 {
            var buffer = [UInt8](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { errorText(code, $0.baseAddress, $0.count) }
            }
            texts.append(String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self))
        }
        return texts.isEmpty ? nil : texts.joined(separator: "; ")
    }
}
