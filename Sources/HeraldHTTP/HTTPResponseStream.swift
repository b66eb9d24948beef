/// A response body written as it is produced (Server-Sent Events, say), on the connection's own
/// thread, never on Swift's cooperative pool.
///
/// The server writes the head (without `Content-Length`; the body ends when the connection
/// closes) and then calls ``body`` with the ``HTTPStreamConnection``. `body` may block its thread:
/// it waits with ``HTTPStreamConnection/wait(for:timeout:)``, which also returns when the client
/// goes away or the server stops, and writes with ``HTTPStreamConnection/write(_:)``. The
/// connection closes when `body` returns.
public struct HTTPResponseStream: Sendable {
    /// Produces the body; runs on the connection's thread.
    public let body: @Sendable (HTTPStreamConnection) -> Void
    /// Called instead of ``body`` when there is no body to produce: the request was a `HEAD`,
    /// or the head could not be written (the client went away).
    public let abandoned: @Sendable () -> Void

    /// A stream produced by `body`; `abandoned` releases what the handler set up for it when
    /// `body` will not run.
    public init(_ body: @escaping @Sendable (HTTPStreamConnection) -> Void, abandoned: @escaping @Sendable () -> Void = {}) {
        self.body = body
        self.abandoned = abandoned
    }
}
