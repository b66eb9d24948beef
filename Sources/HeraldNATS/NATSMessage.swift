import Foundation

/// One message delivered by the server (`MSG` or `HMSG`), or built for a test.
///
/// A value type, `Sendable`. ``payload`` holds the bytes exactly as sent; ``headers`` is nil for
/// a plain `MSG`, and for an `HMSG` whose header block could not be read (then
/// ``headerProblem`` says why and ``payload`` is what followed the block). A message larger than
/// the connection takes comes without headers or payload, with ``oversize`` set.
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
    /// The size (headers and body) of a message larger than the connection takes (the smaller of
    /// ``NATSConnectionOptions/maxPayload`` and the server's `max_payload`), or nil. Its bytes
    /// were read and dropped, never buffered: ``headers`` is nil and ``payload`` empty. It is
    /// delivered so that its receiver can settle it (a JetStream server would otherwise deliver
    /// it again and again); the connection stays.
    public var oversize: Int?

    /// A message; the client builds these from the wire, tests and bridges may build their own.
    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8], subscriptionID: UInt64 = 0,
                headerProblem: String? = nil, oversize: Int? = nil) {
        self.headerProblem = headerProblem
        self.oversize = oversize
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
