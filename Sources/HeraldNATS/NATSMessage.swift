import Foundation

/// One message delivered by the server (`MSG` or `HMSG`), or built for a test.
///
/// A value type, `Sendable`. ``payload`` holds the bytes exactly as sent; ``headers`` is nil for
/// a plain `MSG`, and for an `HMSG` whose header block could not be read (then
/// ``headerProblem`` says why and ``payload`` is what followed the block).
public struct NATSMessage: Sendable, Hashable {
    /// The subject the message was published to.
    public var subject: String
    /// The subject to answer on, when the publisher asked for a reply.
    public var replyTo: String?
    /// The headers, for a message published with headers.
    public var headers: NATSHeaders?
    /// The body.
    public var payload: [UInt8]
    /// The id of the subscription it was delivered to (0 when built by hand).
    public var subscriptionID: UInt64
    /// Why the message's header block could not be read (too short for `NATS/1.0`, a line without
    /// a colon, a bad status line), or nil. Such a message is the message's problem, not the
    /// connection's: it is delivered like any other, without headers.
    public var headerProblem: String?

    /// A message; the client builds these from the wire, tests and bridges may build their own.
    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8], subscriptionID: UInt64 = 0,
                headerProblem: String? = nil) {
        self.headerProblem = headerProblem
        self.subject = subject
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
        self.subscriptionID = subscriptionID
    }

    /// The body as `Data` (for `JSONDecoder`).
    public var data: Data { Data(payload) }

    /// The body decoded as UTF-8 (invalid bytes become U+FFFD).
    public var string: String { String(decoding: payload, as: UTF8.self) }

    /// The status code of a status message (503 no responders, 404 no messages, ...), if any.
    public var status: Int? { headers?.status }
}
