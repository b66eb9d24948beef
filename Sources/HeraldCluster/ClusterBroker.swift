/// The JetStream operations the bridge and the shared post queue need, apart from the client:
/// publishing to a stream with an acknowledgement, and pulling from a durable consumer.
/// ``NATSClusterBackend`` implements them on HeraldNATS; tests may use their own.
public protocol ClusterStreamPublisher: Sendable {
    /// Publishes each message to the stream that holds its subject and waits for the
    /// acknowledgements; one result per message, in order. A message carrying `Nats-Msg-Id`
    /// already stored within the stream's dedupe window is acknowledged as a duplicate.
    func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>]
}

/// A stream's acknowledgement of a publish.
public struct ClusterPublishAck: Sendable, Hashable {
    /// The stream.
    public var stream: String
    /// The message's sequence in it.
    public var sequence: UInt64
    /// Whether the stream had it already (same `Nats-Msg-Id` within the dedupe window).
    public var duplicate: Bool

    /// An acknowledgement.
    public init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }
}

/// A durable pull consumer: messages handed to one puller at a time, delivered again after the
/// consumer's ack wait unless acknowledged (or reported in progress).
public protocol ClusterPullConsumer: Sendable {
    /// Up to `batch` messages, waiting at most `wait` for the first; empty when none came.
    func fetch(batch: Int, wait: Duration) async throws(ClusterError) -> [ClusterDelivery]
}

/// One message pulled from a consumer, with how to settle it.
public struct ClusterDelivery: Sendable {
    /// How a delivery is settled.
    public enum Settlement: Sendable, Hashable {
        /// Done: not delivered again (removed, in a work queue).
        case ack
        /// Not done: deliver again now (to any puller).
        case nak
        /// Still working on it: the ack wait starts again.
        case inProgress
        /// Never deliver again (a message that cannot be handled).
        case term
    }

    /// The message.
    public var message: ClusterMessage
    /// How many times it was delivered (1 the first time).
    public var deliveryCount: Int
    private let settle: @Sendable (Settlement) async throws(ClusterError) -> Void

    /// A delivery settled by `settle`.
    public init(message: ClusterMessage, deliveryCount: Int, settle: @escaping @Sendable (Settlement) async throws(ClusterError) -> Void) {
        self.message = message
        self.deliveryCount = deliveryCount
        self.settle = settle
    }

    /// Settles the delivery.
    public func settle(_ settlement: Settlement) async throws(ClusterError) {
        try await settle(settlement)
    }
}
