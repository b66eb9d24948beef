#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS, client side, over a connected non-blocking ``TCPSocket``, driven from the caller's own
/// `poll` loop: ``handshake()``, ``read(into:)`` and ``write(_:)`` never block; they answer
/// ``IOResult/wantRead`` or ``IOResult/wantWrite`` and the caller polls ``descriptor`` for that
/// and calls again.
///
/// The peer's certificate is verified during the handshake (unless the context's configuration
/// is ``TLSConfiguration/insecure``): a chain to a trusted root, and the host name (or IP
/// address) given here. A refusal reads as `certificate verify failed: unable to get local
/// issuer certificate`, `... hostname mismatch`, `... certificate has expired`.
///
/// `Sendable`: one thread uses it at a time (an exchange's thread, or the pool that hands it to
/// the next one under its lock); OpenSSL's `SSL` object needs no more than that.
public final class TLSStream: ByteStream, @unchecked Sendable {
    /// The socket under the TLS.
    public let descriptor: Int32
    /// The name the certificate must carry (also sent as SNI unless it is an IP address).
    public let serverName: String
    private let context: TLSContext
    private let ssl: OpaquePointer
    private var closed = false

    /// Prepares TLS over `socket` to `serverName` (the handshake is ``handshake()``). The
    /// socket is closed by ``close()``.
    /// - Throws: ``SystemCryptoError`` when OpenSSL cannot make the connection object.
    public init(socket: TCPSocket, context: TLSContext, serverName: String) throws(SystemCryptoError) {
        let functions = context.functions
        functions.errorClear()
        guard let ssl = functions.new(context.context) else {
            throw SystemCryptoError("OpenSSL could not make a TLS connection: \(functions.takeErrors() ?? "no reason given")")
        }
        self.ssl = ssl
        self.context = context
        self.descriptor = socket.descriptor
        self.serverName = serverName
        _ = functions.setDescriptor(ssl, socket.descriptor)
        let setMode: Int32 = 33  // SSL_CTRL_MODE: partial writes, and a retry may pass a moved buffer
        _ = functions.control(ssl, setMode, 1 | 2, nil)
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, serverName, &address) == 1 || inet_pton(AF_INET6, serverName, &address) == 1
        if !isAddress {
            let setHostName: Int32 = 55  // SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name
            _ = serverName.withCString { functions.control(ssl, setHostName, 0, UnsafeMutableRawPointer(mutating: $0)) }
        }
        guard !context.configuration.insecure else { return }
        let expected = isAddress ? functions.setIPAddress(functions.parameters(ssl), serverName) : functions.setHost(ssl, serverName)
        guard expected == 1 else {
            throw SystemCryptoError("OpenSSL cannot check the name \(serverName): \(functions.takeErrors() ?? "no reason given")")
        }
    }

    deinit {
        context.functions.free(ssl)
    }

    /// Drives the handshake: ``IOResult/bytes(_:)`` (0) once it is done, want-read or
    /// want-write while it goes on, ``IOResult/failed(_:)`` with the reason (a refused
    /// certificate among them).
    public func handshake() -> IOResult {
        context.functions.errorClear()
        let result = context.functions.connect(ssl)
        return result == 1 ? .bytes(0) : outcome(of: result, during: "the TLS handshake")
    }

    /// Reads decrypted bytes; ``IOResult/closed`` at the peer's close_notify or the end of
    /// the stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        guard buffer.count > 0 else { return .bytes(0) }
        context.functions.errorClear()
        let result = context.functions.read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        return result > 0 ? .bytes(Int(result)) : outcome(of: result, during: "reading")
    }

    /// Encrypts and writes some of `bytes`. After a want-read or want-write, call again with
    /// the same bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard bytes.count > 0 else { return .bytes(0) }
        context.functions.errorClear()
        let result = context.functions.write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        return result > 0 ? .bytes(Int(result)) : outcome(of: result, during: "writing")
    }

    /// Sends close_notify if the socket takes it now (never waits for the peer's), then closes
    /// the socket.
    public func close() {
        guard !closed else { return }
        closed = true
        context.functions.errorClear()
        _ = context.functions.shutdown(ssl)
        context.functions.errorClear()
        TCPSocket.close(descriptor)
    }

    private func outcome(of result: Int32, during operation: String) -> IOResult {
        let functions = context.functions
        let code = functions.getError(ssl, result)
        let systemError = errno
        switch code {
        case 2: return .wantRead  // SSL_ERROR_WANT_READ
        case 3: return .wantWrite  // SSL_ERROR_WANT_WRITE
        case 6: return .closed  // SSL_ERROR_ZERO_RETURN: close_notify
        case 5:  // SSL_ERROR_SYSCALL
            let reasons = functions.takeErrors()
            if systemError == 0 || systemError == EAGAIN { return reasons.map { .failed(SystemError("TLS \(operation) failed: \($0)")) } ?? .closed }
            return .failed(SystemError(errno: systemError))
        case 1:  // SSL_ERROR_SSL
            let reasons = functions.takeErrors() ?? "no reason given"
            let verification = functions.verifyResult(ssl)
            if verification != 0 {
                let text = functions.verifyErrorText(verification).map { String(cString: $0) } ?? "error \(verification)"
                return .failed(SystemError("certificate verify failed: \(text)"))
            }
            return .failed(SystemError("TLS \(operation) failed: \(reasons)"))
        default:
            return .failed(SystemError("TLS \(operation) failed (OpenSSL error \(code)): \(functions.takeErrors() ?? "no reason given")"))
        }
    }
}
