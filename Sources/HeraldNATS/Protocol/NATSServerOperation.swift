/// One operation the server sends, as the parser hands it over.
enum NATSServerOperation: Sendable, Equatable {
    /// `INFO {json}`: the JSON bytes.
    case info([UInt8])
    /// `MSG` or `HMSG`, with its headers parsed.
    case message(NATSMessage)
    /// `PING`: the server wants a `PONG`.
    case ping
    /// `PONG`: the answer to our oldest outstanding `PING`.
    case pong
    /// `+OK` (only in verbose mode, which the client never asks for; accepted anyway).
    case ok
    /// `-ERR 'text'`: the text without its quotes.
    case error(String)
}

/// The server sent something that is not the NATS protocol. The stream cannot be resynchronised
/// after it, so the connection is dropped.
public struct NATSProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, e.g. `the MSG size 'x1' is not a number`.
    public var reason: String
    /// The offset in the stream of bytes received on this connection where the bad frame starts.
    public var offset: Int

    /// A readable form naming the reason and the offset.
    public var description: String { "\(reason) (at byte \(offset) of the stream)" }
}
