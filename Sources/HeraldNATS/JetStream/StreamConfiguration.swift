/// A JetStream stream's configuration, as `$JS.API.STREAM.CREATE` takes it. Fields left nil take
/// the server's defaults. A value type, `Sendable`, `Codable` with the server's JSON keys.
public struct StreamConfiguration: Sendable, Hashable, Codable {
    /// How messages are retained.
    public enum Retention: String, Sendable, Hashable, Codable {
        /// Until a limit (count, bytes, age) removes them.
        case limits
        /// While a consumer has not acknowledged them.
        case interest
        /// Until one consumer acknowledges them (a work queue).
        case workQueue = "workqueue"
    }

    /// Where messages are stored.
    public enum Storage: String, Sendable, Hashable, Codable {
        /// On disk.
        case file
        /// In memory.
        case memory
    }

    /// What happens to a full stream.
    public enum Discard: String, Sendable, Hashable, Codable {
        /// The oldest messages are removed.
        case old
        /// New messages are refused.
        case new
    }

    /// The stream name (no `.`, `*`, `>` or white space).
    public var name: String
    /// The subjects it stores.
    public var subjects: [String]?
    /// A description shown by tools.
    public var description: String?
    /// The retention policy (default limits).
    public var retention: Retention?
    /// The storage (default file).
    public var storage: Storage?
    /// The number of replicas (1, 3 or 5 in a cluster).
    public var replicas: Int?
    /// The most messages kept (-1 unlimited).
    public var maxMessages: Int?
    /// The most bytes kept (-1 unlimited).
    public var maxBytes: Int?
    /// The oldest a message may get, in nanoseconds (0 unlimited); see ``maxAge``.
    public var maxAgeNanoseconds: Int64?
    /// The most messages per subject (-1 unlimited): a KV bucket's history.
    public var maxMessagesPerSubject: Int?
    /// The largest message (-1 unlimited).
    public var maxMessageSize: Int?
    /// The discard policy.
    public var discard: Discard?
    /// The window in which a repeated `Nats-Msg-Id` is stored once, in nanoseconds; see ``duplicateWindow``.
    public var duplicateWindowNanoseconds: Int64?
    /// Whether `Nats-Rollup` headers may purge a subject.
    public var allowRollup: Bool?
    /// Whether deleting messages is refused.
    public var denyDelete: Bool?
    /// Whether purging is refused.
    public var denyPurge: Bool?
    /// Whether `$JS.API.DIRECT.GET` may be used (any replica answers).
    public var allowDirect: Bool?

    enum CodingKeys: String, CodingKey {
        case name, subjects, description, retention, storage
        case replicas = "num_replicas", maxMessages = "max_msgs", maxBytes = "max_bytes", maxAgeNanoseconds = "max_age"
        case maxMessagesPerSubject = "max_msgs_per_subject", maxMessageSize = "max_msg_size", discard
        case duplicateWindowNanoseconds = "duplicate_window", allowRollup = "allow_rollup_hdrs"
        case denyDelete = "deny_delete", denyPurge = "deny_purge", allowDirect = "allow_direct"
    }

    /// A configuration with a name and subjects; set the rest as needed.
    public init(name: String, subjects: [String]? = nil, retention: Retention? = nil, storage: Storage? = nil, replicas: Int? = nil) {
        self.name = name
        self.subjects = subjects
        self.retention = retention
        self.storage = storage
        self.replicas = replicas
    }

    /// ``maxAgeNanoseconds`` as a `Duration` (nil: the server default, unlimited).
    public var maxAge: Duration? {
        get { maxAgeNanoseconds.map { .nanoseconds($0) } }
        set { maxAgeNanoseconds = newValue.map(\.nanoseconds) }
    }

    /// ``duplicateWindowNanoseconds`` as a `Duration` (nil: the server default, two minutes).
    public var duplicateWindow: Duration? {
        get { duplicateWindowNanoseconds.map { .nanoseconds($0) } }
        set { duplicateWindowNanoseconds = newValue.map(\.nanoseconds) }
    }
}

/// A stream's configuration and state, as `STREAM.INFO` / `STREAM.CREATE` answer.
public struct StreamInfo: Sendable, Hashable, Decodable {
    /// The configuration, with the server's defaults filled in.
    public var config: StreamConfiguration
    /// Counts and sequence numbers.
    public var state: StreamState

    /// A stream's counts.
    public struct StreamState: Sendable, Hashable, Decodable {
        /// Messages stored.
        public var messages: UInt64
        /// Bytes stored.
        public var bytes: UInt64
        /// The first sequence stored.
        public var firstSequence: UInt64
        /// The last sequence stored.
        public var lastSequence: UInt64
        /// Consumers of the stream.
        public var consumerCount: Int

        enum CodingKeys: String, CodingKey {
            case messages, bytes, firstSequence = "first_seq", lastSequence = "last_seq", consumerCount = "consumer_count"
        }
    }
}

extension Duration {
    /// The whole nanoseconds (JetStream's JSON durations), saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / 1_000_000_000
    }
}
