import Foundation

/// The JetStream API over one ``NATSConnection``: streams, consumers, acknowledged publishes
/// (one at a time, or many in flight in a window), pull fetches and key-value buckets.
///
/// API calls are requests to `$JS.API.…` (or `$JS.<domain>.API.…`); an answer with an `error`
/// object throws ``JetStreamError``, a missing JetStream throws ``NATSError`` `.noResponders`.
/// `Sendable`; the async-publish window is shared by every caller of one context.
public final class JetStreamContext: Sendable {
    /// The connection the context uses.
    public let connection: NATSConnection
    /// The API prefix, `$JS.API` or `$JS.<domain>.API`.
    public let apiPrefix: String
    /// The wait for each API answer and each publish acknowledgement.
    public let timeout: Duration
    let window: PublishWindow

    /// A context on `connection`.
    /// - Parameters:
    ///   - domain: the JetStream domain, for a leaf node setup; nil for the local one.
    ///   - timeout: the wait for API answers and acks.
    ///   - maxPendingPublishes: how many ``publishAsync(_:payload:headers:options:)`` may await
    ///     their acks at once; the next one waits for a free slot.
    public init(connection: NATSConnection, domain: String? = nil, timeout: Duration = .seconds(5), maxPendingPublishes: Int = 256) {
        self.connection = connection
        apiPrefix = domain.map { "$JS.\($0).API" } ?? "$JS.API"
        self.timeout = timeout
        window = PublishWindow(limit: max(1, maxPendingPublishes))
    }

    // MARK: Streams

    /// Creates a stream; an identical existing stream is returned as it is.
    /// - Throws: ``JetStreamError`` ``JetStreamError/streamNameInUse`` when a stream of that name
    ///   exists with other settings (the description says which server-side check failed).
    public func createStream(_ config: StreamConfiguration) async throws -> StreamInfo {
        try Self.validateName(config.name, what: "stream")
        return try await api("STREAM.CREATE.\(config.name)", body: config)
    }

    /// Changes a stream's configuration (what the server allows to change).
    public func updateStream(_ config: StreamConfiguration) async throws -> StreamInfo {
        try Self.validateName(config.name, what: "stream")
        return try await api("STREAM.UPDATE.\(config.name)", body: config)
    }

    /// Lowers a stream's largest message (`max_msg_size`) to `size` when it is unlimited or
    /// larger, changing nothing else: the configuration the server returns is sent back as it is
    /// with that one field changed, so fields this client does not model are kept. A limit
    /// already at most `size` is left as it is.
    /// - Returns: the limit in force afterwards.
    /// - Throws: ``JetStreamError`` (``JetStreamError/streamNotFound``, or the update refused).
    public func limitMessageSize(stream name: String, to size: Int) async throws -> Int {
        try Self.validateName(name, what: "stream")
        let infoSubject = "\(apiPrefix).STREAM.INFO.\(name)"
        let info = try await request(infoSubject, payload: [])
        let found = try Self.decode(StreamInfo.self, from: info.payload, subject: infoSubject)
        if let current = found.config.maxMessageSize, current > 0, current <= size { return current }
        guard let object = try? JSONSerialization.jsonObject(with: Data(info.payload)) as? [String: Any],
              var config = object["config"] as? [String: Any] else {
            throw NATSError.invalidResponse("the answer on '\(infoSubject)' has no configuration object")
        }
        config["max_msg_size"] = size
        let updateSubject = "\(apiPrefix).STREAM.UPDATE.\(name)"
        let body = try JSONSerialization.data(withJSONObject: config)
        let answer = try await request(updateSubject, payload: Array(body))
        return try Self.decode(StreamInfo.self, from: answer.payload, subject: updateSubject).config.maxMessageSize ?? size
    }

    /// A stream's configuration and state.
    /// - Throws: ``JetStreamError`` ``JetStreamError/streamNotFound``.
    public func streamInfo(_ name: String) async throws -> StreamInfo {
        try Self.validateName(name, what: "stream")
        return try await api("STREAM.INFO.\(name)", body: nil as String?)
    }

    /// Deletes a stream and its messages.
    public func deleteStream(_ name: String) async throws {
        try Self.validateName(name, what: "stream")
        let _: SuccessResponse = try await api("STREAM.DELETE.\(name)", body: nil as String?)
    }

    // MARK: Consumers

    /// Creates a consumer on `stream` (durable when the config has a durable name); an identical
    /// existing one is returned as it is.
    public func createConsumer(stream: String, _ config: ConsumerConfiguration) async throws -> ConsumerInfo {
        try Self.validateName(stream, what: "stream")
        struct Create: Encodable {
            var stream_name: String
            var config: ConsumerConfiguration
        }
        let body = Create(stream_name: stream, config: config)
        if let durable = config.durableName {
            try Self.validateName(durable, what: "consumer")
            return try await api("CONSUMER.DURABLE.CREATE.\(stream).\(durable)", body: body)
        }
        return try await api("CONSUMER.CREATE.\(stream)", body: body)
    }

    /// A consumer's configuration and progress.
    /// - Throws: ``JetStreamError`` ``JetStreamError/consumerNotFound``.
    public func consumerInfo(stream: String, consumer: String) async throws -> ConsumerInfo {
        try Self.validateName(stream, what: "stream")
        try Self.validateName(consumer, what: "consumer")
        return try await api("CONSUMER.INFO.\(stream).\(consumer)", body: nil as String?)
    }

    // MARK: The API exchange

    struct SuccessResponse: Decodable { var success: Bool? }

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: Int?
            var err_code: Int?
            var description: String?
        }
        var error: Detail?
    }

    /// One API request: `body` as JSON (nothing for nil), the answer decoded as `T`.
    func api<T: Decodable>(_ operation: String, body: (some Encodable)?) async throws -> T {
        let subject = "\(apiPrefix).\(operation)"
        let payload = try body.map { Array(try JSONEncoder().encode($0)) } ?? []
        let reply = try await request(subject, payload: payload)
        return try Self.decode(T.self, from: reply.payload, subject: subject)
    }

    /// A request whose 503 means "JetStream is not there".
    func request(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil) async throws -> NATSMessage {
        do {
            return try await connection.request(subject, payload: payload, headers: headers, timeout: timeout)
        } catch let error as NATSError where error.kind == .noResponders {
            throw NATSError(kind: .noResponders, message: "nothing answered '\(subject)': JetStream is not enabled, or no stream takes the subject")
        }
    }

    /// Decodes an API answer, throwing its `error` object as a ``JetStreamError``.
    static func decode<T: Decodable>(_ type: T.Type, from payload: [UInt8], subject: String) throws -> T {
        let data = Data(payload)
        let decoder = JSONDecoder()
        if let envelope = try? decoder.decode(ErrorBody.self, from: data), let error = envelope.error {
            throw JetStreamError(code: error.code ?? 0, errorCode: error.err_code ?? 0,
                                 description: error.description ?? "no description", subject: subject)
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw NATSError.invalidResponse("the answer on '\(subject)' is not a \(T.self): \(error); it begins \(String(decoding: payload.prefix(120), as: UTF8.self))")
        }
    }

    /// Stream and consumer names become subject tokens: no `.`, `*`, `>` or white space.
    static func validateName(_ name: String, what: String) throws(NATSError) {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 != 127 && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "*") && $0 != UInt8(ascii: ">") }) else {
            throw .invalidSubject("the \(what) name '\(name)' is empty or contains '.', '*', '>' or white space")
        }
    }
}

extension NATSConnection {
    /// A JetStream context on this connection (see ``JetStreamContext/init(connection:domain:timeout:maxPendingPublishes:)``).
    public func jetStream(domain: String? = nil, timeout: Duration = .seconds(5), maxPendingPublishes: Int = 256) -> JetStreamContext {
        JetStreamContext(connection: self, domain: domain, timeout: timeout, maxPendingPublishes: maxPendingPublishes)
    }
}
