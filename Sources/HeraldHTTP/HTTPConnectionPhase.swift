/// What one of an ``HTTPServer``'s connections is doing, as its ``HTTPServer/Snapshot`` shows.
public enum HTTPConnectionPhase: Sendable, Hashable {
    /// Waiting for the first byte of a request.
    case idle
    /// Reading a request head.
    case head
    /// Reading a request body.
    case body
    /// The request is with the handler or its response is being written.
    case handling
    /// An ``HTTPResponseStream`` is writing its body.
    case streaming
}
