/// The bounds the HTTP server keeps whatever its clients do: how many connections (and how many
/// of them streams), how many body bytes held at once, and how long a request head or an idle
/// connection may take.
///
/// The defaults suit a loopback test server; tests set tiny values to reach each limit.
public struct HTTPServerLimits: Sendable, Hashable {
    /// Connections served at once. One more is answered `503 Service Unavailable`
    /// (`Retry-After: 1`, `Connection: close`) by the accepting thread and closed at once, so
    /// a flood of connections costs no thread and no client waits unanswered in the backlog.
    public var maxConnections: Int
    /// The largest request head (request line and header fields), in bytes; larger is `413`.
    public var maxHeadBytes: Int
    /// The largest body of one request, in bytes; larger is `413` and the connection closed.
    public var maxBodyBytes: Int
    /// Body bytes held across all connections at once. A request whose body would go over is
    /// answered `503` (`Retry-After: 1`) and its connection closed, before its body is read.
    public var maxBufferedBodyBytes: Int
    /// Time for a whole request head, from its first byte (not renewed by each byte, so a
    /// client dribbling a head cannot hold a connection); then `408` and the connection closes.
    public var headTimeout: Duration
    /// Time a keep-alive connection may wait for the first byte of its next request, and a
    /// body may go without a byte, before the connection closes.
    public var idleTimeout: Duration
    /// Streamed responses (``HTTPResponseStream``) at once; nil: as many as connections. One
    /// more is answered `503 Service Unavailable` (`Retry-After: 1`) and its connection closed,
    /// so long-lived streams can never take the `maxConnections - maxStreams` connections kept
    /// for everything else (health probes, scrapes).
    public var maxStreams: Int?

    /// Creates limits; every parameter has the sandbox's default.
    public init(
        maxConnections: Int = 256, maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 64 * 1024 * 1024,
        maxBufferedBodyBytes: Int = 256 * 1024 * 1024, headTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(30), maxStreams: Int? = nil
    ) {
        self.maxConnections = maxConnections
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxBufferedBodyBytes = maxBufferedBodyBytes
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.maxStreams = maxStreams
    }
}
