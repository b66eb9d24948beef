/// Sends one HTTP request and returns the whole response.
///
/// An implementation must:
/// - return every response that arrives, whatever its status (4xx and 5xx included): status
///   handling belongs to the clients;
/// - throw only ``ServiceError`` values of kind `.transport`, `.timeout` or `.cancelled`;
/// - honour ``HTTPRequest/timeout`` as a deadline for the whole exchange;
/// - stop promptly and throw `.cancelled` when the calling task is cancelled.
///
/// ``SchemeRoutingTransport`` is the one to use: ``SocketHTTPTransport`` for `http` and
/// `https` (TLS over the socket), which waits without spending CPU, with redirects followed.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the complete response.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
