/// What one non-blocking read or write of a ``ByteStream`` did.
public enum IOResult: Sendable, Hashable {
    /// This many bytes were moved (never 0 for a non-empty buffer).
    case bytes(Int)
    /// Nothing can move until the descriptor is readable: poll for input, then call again.
    case wantRead
    /// Nothing can move until the descriptor is writable: poll for output, then call again.
    case wantWrite
    /// The peer ended the stream (a read at the end, or, for TLS, its close_notify).
    case closed
    /// The call failed (a reset, a refused certificate); the stream is unusable.
    case failed(SystemError)
}
