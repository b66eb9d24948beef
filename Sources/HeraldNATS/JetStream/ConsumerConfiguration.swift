import HeraldSync

/// A consumer's configuration, as `$JS.API.CONSUMER.DURABLE.CREATE` takes it. The client uses
/// pull consumers (no deliver subject): ``JetStreamContext/fetch(stream:consumer:batch:expires:noWait:)``.
/// A value type, `Sendable`, `Codable` with the server's JSON keys.
public struct ConsumerConfiguration: Sendable, Hashable, Codable {
    /// Where delivery starts.
    public enum DeliverPolicy: String, Sendable, Hashable, Codable {
        /// From the first message.
        case all
        /// From the last message.
        case last
        /// Only messages stored after the consumer was created.
        case new
        /// From ``ConsumerConfiguration/startSequence``.
        case byStartSequence = "by_start_sequence"
        /// The last message of each subject.
        case lastPerSubject = "last_per_subject"
    }

    /// How messages are acknowledged.
    public enum AckPolicy: String, Sendable, Hashable, Codable {
        /// Each message on its own.
        case explicit
        /// Not at all.
        case none
        /// A message acknowledges every earlier one.
        case all
    }

    /// The durable name (the consumer survives without clients); nil for an ephemeral one.
    public var durableName: String?
    /// A description shown by tools.
    public var description: String?
    /// Where delivery starts (default all).
    public var deliverPolicy: DeliverPolicy?
    /// The first sequence, with ``DeliverPolicy/byStartSequence``.
    public var startSequence: UInt64?
    /// The acknowledgement policy (default explicit).
    public var ackPolicy: AckPolicy?
    /// How long an unacknowledged message waits before it is redelivered, in nanoseconds; see ``ackWait``.
    public var ackWaitNanoseconds: Int64?
    /// The most deliveries of one message (-1 unlimited).
    public var maxDeliver: Int?
    /// Only messages whose subject matches this.
    public var filterSubject: String?
    /// The most unacknowledged messages at a time.
    public var maxAckPending: Int?
    /// The most pull requests waiting at a time.
    public var maxWaiting: Int?
    /// Replay policy (`instant` or `original`).
    public var replayPolicy: String?
    /// The replicas of the consumer's state (0: as the stream).
    public var replicas: Int?

    enum CodingKeys: String, CodingKey {
        case durableName = "durable_name", description, deliverPolicy = "deliver_policy", startSequence = "opt_start_seq"
        case ackPolicy = "ack_policy", ackWaitNanoseconds = "ack_wait", maxDeliver = "max_deliver", filterSubject = "filter_subject"
        case maxAckPending = "max_ack_pending", maxWaiting = "max_waiting", replayPolicy = "replay_policy", replicas = "num_replicas"
    }

    /// A durable pull consumer with explicit acks.
    public init(durableName: String?, ackPolicy: AckPolicy? = .explicit, ackWait: Duration? = nil, filterSubject: String? = nil) {
        self.durableName = durableName
        self.ackPolicy = ackPolicy
        self.ackWaitNanoseconds = ackWait?.wholeNanoseconds
        self.filterSubject = filterSubject
    }

    /// ``ackWaitNanoseconds`` as a `Duration`.
    public var ackWait: Duration? {
        get { ackWaitNanoseconds.map { .nanoseconds($0) } }
        set { ackWaitNanoseconds = newValue.map(\.wholeNanoseconds) }
    }
}

/// A consumer's configuration and progress, as `CONSUMER.INFO` / create answer.
public struct ConsumerInfo: Sendable, Hashable, Decodable {
    /// The stream it reads.
    public var streamName: String
    /// Its name.
    public var name: String
    /// The configuration with the server's defaults.
    public var config: ConsumerConfiguration
    /// Messages delivered and not acknowledged yet.
    public var numAckPending: Int
    /// Messages redelivered and not acknowledged yet.
    public var numRedelivered: Int
    /// Messages of the stream not delivered yet.
    public var numPending: UInt64
    /// Pull requests waiting.
    public var numWaiting: Int
    /// The last message below which every delivered one was acknowledged or terminated (nil when
    /// the server did not say).
    public var ackFloor: ConsumerSequences?

    enum CodingKeys: String, CodingKey {
        case streamName = "stream_name", name, config, numAckPending = "num_ack_pending"
        case numRedelivered = "num_redelivered", numPending = "num_pending", numWaiting = "num_waiting"
        case ackFloor = "ack_floor"
    }
}

/// A position in a consumer's progress: its own delivery count and the stream's sequence.
public struct ConsumerSequences: Sendable, Hashable, Decodable {
    /// The consumer's delivery sequence.
    public var consumerSequence: UInt64
    /// The stream's message sequence.
    public var streamSequence: UInt64

    enum CodingKeys: String, CodingKey {
        case consumerSequence = "consumer_seq", streamSequence = "stream_seq"
    }
}
