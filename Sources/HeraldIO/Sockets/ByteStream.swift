/// A connected, non-blocking stream of bytes (a plain ``TCPSocket`` or a ``TLSStream`` over
/// one), driven from the caller's own `poll(2)` loop.
///
/// Neither call ever blocks. When one answers ``IOResult/wantRead`` or
/// ``IOResult/wantWrite`` the caller polls ``descriptor`` for that and calls again with the same
/// buffer (TLS may need to read to write, or write to read). A conforming type is used by one
/// thread at a time.
public protocol ByteStream: Sendable {
    /// The socket to poll.
    var descriptor: Int32 { get }
    /// Reads what is available into `buffer` (up to its size).
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult
    /// Writes as much of `bytes` as the stream takes now.
    mutating func write(_ bytes: UnsafeRawBufferPointer) -> IOResult
    /// Ends the stream (for TLS, sends close_notify if it can without waiting) and closes the
    /// socket. Call once.
    mutating func close()
}
