/// A configured OpenSSL client context (`SSL_CTX`): the trusted roots, the verification mode,
/// the oldest version and the client certificate of a ``TLSConfiguration``, made once and
/// shared by every ``TLSStream`` made with it.
///
/// `Sendable`: the context is configured in `init` and only read afterwards (`SSL_new`), which
/// OpenSSL allows from any thread; it is freed when the last reference goes.
public final class TLSContext: @unchecked Sendable {
    let functions: TLSFunctions
    let context: OpaquePointer
    /// The configuration it was made from.
    public let configuration: TLSConfiguration

    /// Loads OpenSSL and configures a context.
    /// - Throws: ``SystemCryptoError`` when libssl cannot be loaded, or the CA file, the
    ///   certificate or the key cannot be used (naming the file and OpenSSL's reason).
    public init(_ configuration: TLSConfiguration) throws(SystemCryptoError) {
        let functions = try TLSFunctions.shared.get()
        functions.errorClear()
        guard let context = functions.contextNew(functions.clientMethod()) else {
            throw SystemCryptoError("OpenSSL could not make a TLS context: \(functions.takeErrors() ?? "no reason given")")
        }
        self.functions = functions
        self.context = context
        self.configuration = configuration
        // From here on, deinit frees the context whatever is thrown.
        let setMinimumVersion: Int32 = 123  // SSL_CTRL_SET_MIN_PROTO_VERSION
        guard functions.contextControl(context, setMinimumVersion, configuration.minimumVersion.wireValue, nil) == 1 else {
            throw SystemCryptoError("OpenSSL refused the minimum TLS version: \(functions.takeErrors() ?? "no reason given")")
        }
        // A peer that closes without close_notify reads as the end of the stream; the HTTP
        // framing (Content-Length, chunks) still tells a cut body from a whole one.
        let ignoreUnexpectedEOF: UInt64 = 1 << 7  // SSL_OP_IGNORE_UNEXPECTED_EOF
        _ = functions.contextSetOptions(context, ignoreUnexpectedEOF)
        if let caFile = configuration.caFile {
            guard functions.contextLoadLocations(context, caFile, nil) == 1 else {
                throw SystemCryptoError("the CA file \(caFile) cannot be used: \(functions.takeErrors() ?? "no certificate in it")")
            }
        } else {
            guard functions.contextDefaultPaths(context) == 1 else {
                throw SystemCryptoError("the system's CA store cannot be loaded: \(functions.takeErrors() ?? "no reason given")")
            }
        }
        if let certificateFile = configuration.certificateFile {
            guard functions.contextUseChainFile(context, certificateFile) == 1 else {
                throw SystemCryptoError("the certificate file \(certificateFile) cannot be used: \(functions.takeErrors() ?? "no reason given")")
            }
            let keyFile = configuration.privateKeyFile ?? certificateFile
            let pem: Int32 = 1  // SSL_FILETYPE_PEM
            guard functions.contextUseKeyFile(context, keyFile, pem) == 1, functions.contextCheckKey(context) == 1 else {
                throw SystemCryptoError("the private key file \(keyFile) cannot be used with \(certificateFile): \(functions.takeErrors() ?? "no reason given")")
            }
        }
        let verifyNone: Int32 = 0, verifyPeer: Int32 = 1  // SSL_VERIFY_NONE, SSL_VERIFY_PEER
        functions.contextSetVerify(context, configuration.insecure ? verifyNone : verifyPeer, nil)
    }

    deinit {
        functions.contextFree(context)
    }
}
