import Foundation
import HeraldIO
import HeraldSync

/// The ``HTTPTransport`` for `http://` and `https://` URLs: HTTP/1.1 over a socket of its own;
/// for `http` one connection per request (`Connection: close`), for `https` TLS over the socket
/// (the system's OpenSSL, loaded at run time) with connections kept alive per origin.
///
/// `https` verifies the server's certificate against the system's CA store (or the request's
/// ``TLSConfiguration/caFile``) and its host name, unless the request's
/// ``TLSConfiguration/insecure`` says otherwise; TLS 1.2 is the oldest version spoken.
///
/// Each request runs on a dedicated thread that sleeps in `poll(2)` until the socket or a
/// cancellation is ready, so a service that takes its time costs no CPU while it does, and the
/// cooperative pool is never blocked. (`URLSession` on Linux keeps a write source armed on an
/// idle connection and spins for the whole wait.) The whole exchange, name resolution
/// included, has a deadline: ``HTTPRequest/timeout`` or the default given here. Cancelling the
/// calling task stops the exchange at its next wait; only name resolution is not interruptible.
///
/// Responses framed by `Content-Length`, chunked coding or the end of the connection are
/// read, interim `1xx` answers skipped; redirects are returned, not followed (see
/// ``SchemeRoutingTransport``). A kept-alive connection the server closed meanwhile is
/// replaced by a new one, once.
public final class SocketHTTPTransport: HTTPTransport {
    private let defaultTimeout: Duration
    private let connector = HTTPConnector()

    /// Creates a transport whose requests without their own timeout get `defaultTimeout`.
    public init(defaultTimeout: Duration = .seconds(30)) {
        self.defaultTimeout = defaultTimeout
    }

    /// Sends `request`; throws `.transport` (not `http`, malformed head or response, refused,
    /// reset, dropped), `.timeout` or `.cancelled`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let timeout = request.timeout ?? defaultTimeout
        let encoded: HTTP1RequestEncoder
        do {
            encoded = try HTTP1RequestEncoder(request, keepAlive: request.url.scheme?.lowercased() == "https")
        } catch {
            throw ServiceError.transport(error.reason)
        }
        if Task.isCancelled { throw ServiceError.cancelled }
        let exchange = try SocketExchange(request: encoded, timeout: timeout, connector: connector)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                NamedThread.start("herald.http") {
                    continuation.resume(with: exchange.run().mapError { $0 })
                }
            }
        } onCancel: {
            exchange.cancel()
        }
    }
}
