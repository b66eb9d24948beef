import HeraldSync

/// A message delivered by a JetStream consumer, with its delivery metadata and the
/// acknowledgements the consumer expects (``ack()``, ``nak(delay:)``, ``inProgress()``, ``term()``).
///
/// Acks are publishes to the message's `$JS.ACK…` reply subject: they are queued in order with
/// everything else the connection sends and cost no round trip (use ``doubleAck()`` to wait
/// for the server's confirmation). `Sendable`.
public struct JetStreamMessage: Sendable {
    /// The message as delivered (subject, headers, payload, the `$JS.ACK` reply subject).
    public let message: NATSMessage
    /// Where it sits in the stream and how often it was delivered, from the reply subject.
    public let metadata: Metadata
    let connection: NATSConnection

    /// The delivery metadata of `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ns>.<pending>`
    /// (and the longer form with domain and account hash).
    public struct Metadata: Sendable, Hashable {
        /// The stream.
        public var stream: String
        /// The consumer.
        public var consumer: String
        /// How many times it has been delivered (1 at first; more after a nak or an ack timeout).
        public var deliveries: UInt64
        /// Its sequence in the stream.
        public var streamSequence: UInt64
        /// Its sequence in the consumer's deliveries.
        public var consumerSequence: UInt64
        /// When it was stored, in nanoseconds since 1970.
        public var timestampNanoseconds: Int64
        /// Messages still pending for the consumer after this one.
        public var pending: UInt64
        /// The JetStream domain, when the subject names one.
        public var domain: String?

        /// Parses a `$JS.ACK` subject.
        /// - Throws: ``NATSError`` `.invalidResponse` naming the subject.
        public init(parsing subject: String) throws(NATSError) {
            // Over the UTF-8 bytes: this runs for every message a consumer delivers.
            let tokens = subject.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard tokens.count >= 9, tokens[0].elementsEqual("$JS".utf8), tokens[1].elementsEqual("ACK".utf8) else {
                throw .invalidResponse("'\(subject)' is not a JetStream ack subject")
            }
            // v1: 9 tokens; v2 adds the domain and account hash after ACK (and maybe a random token).
            let base: Int
            if tokens.count == 9 {
                base = 2
                domain = nil
            } else if tokens.count >= 11 {
                base = 4
                domain = tokens[2].elementsEqual("_".utf8) ? nil : String(Substring(tokens[2]))
            } else {
                throw .invalidResponse("the ack subject '\(subject)' has \(tokens.count) tokens")
            }
            stream = String(Substring(tokens[base]))
            consumer = String(Substring(tokens[base + 1]))
            guard let deliveries = Self.number(tokens[base + 2], as: UInt64.self),
                  let streamSequence = Self.number(tokens[base + 3], as: UInt64.self),
                  let consumerSequence = Self.number(tokens[base + 4], as: UInt64.self),
                  let timestamp = Self.number(tokens[base + 5], as: Int64.self),
                  let pending = Self.number(tokens[base + 6], as: UInt64.self)
            else { throw .invalidResponse("the ack subject '\(subject)' has a token that is not a number") }
            self.deliveries = deliveries
            self.streamSequence = streamSequence
            self.consumerSequence = consumerSequence
            timestampNanoseconds = timestamp
            self.pending = pending
        }

        /// A token as a number: plain digits directly, anything else (a sign) as the standard
        /// library reads it.
        private static func number<T: FixedWidthInteger>(_ token: Substring.UTF8View, as type: T.Type) -> T? {
            guard !token.isEmpty, token.count < 19, token.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                return T(Substring(token))
            }
            var value: T = 0
            for digit in token { value = value * 10 + T(digit - 48) }
            return value
        }
    }

    init(message: NATSMessage, connection: NATSConnection) throws(NATSError) {
        self.message = message
        self.connection = connection
        metadata = try Metadata(parsing: message.replyTo ?? "")
    }

    /// The subject the message was published to.
    public var subject: String { message.subject }
    /// The body.
    public var payload: [UInt8] { message.payload }
    /// The headers it was published with.
    public var headers: NATSHeaders? { message.headers }

    /// Acknowledges it: it will not be delivered again.
    public func ack() throws(NATSError) { try reply(Self.ackBody) }

    /// The body of an ack, made once (every consumed message is acked).
    private static let ackBody = Array("+ACK".utf8)

    /// Refuses it for now: it is delivered again (after `delay`, when given).
    public func nak(delay: Duration? = nil) throws(NATSError) {
        if let delay { try reply("-NAK {\"delay\":\(delay.wholeNanoseconds)}") } else { try reply("-NAK") }
    }

    /// Says work is still going on: the ack wait starts over.
    public func inProgress() throws(NATSError) { try reply("+WPI") }

    /// Gives up on it: it is never delivered again.
    public func term() throws(NATSError) { try reply("+TERM") }

    /// Acknowledges and waits for the server to confirm it recorded the ack.
    public func doubleAck(timeout: Duration = .seconds(5)) async throws {
        guard let subject = message.replyTo else { throw NATSError.invalidResponse("the message has no ack subject") }
        _ = try await connection.request(subject, payload: Array("+ACK".utf8), timeout: timeout)
    }

    private func reply(_ body: String) throws(NATSError) {
        try reply(Array(body.utf8))
    }

    private func reply(_ body: [UInt8]) throws(NATSError) {
        guard let subject = message.replyTo else { throw .invalidResponse("the message on '\(message.subject)' has no ack subject") }
        try connection.publish(subject, payload: body)
    }
}
