/// The messages of one subscription, in the order the server delivered them: an
/// `AsyncSequence` of ``NATSMessage`` with a single consumer.
///
/// The sequence ends when the subscription is unsubscribed (or reaches its `after:` count) or
/// the connection closes. Its buffer holds ``NATSConnectionOptions/subscriptionBufferLimit``
/// messages; a consumer that falls further behind loses the newest ones, which
/// ``NATSEvent/slowConsumer(subject:dropped:)`` reports. Ending the iteration (or releasing the
/// subscription) unsubscribes. `Sendable`.
public struct NATSSubscription: AsyncSequence, Sendable {
    /// The element type: one delivered message.
    public typealias Element = NATSMessage
    /// The subject (or pattern) subscribed to.
    public let subject: String
    /// The queue group, when the subscription is one of a group.
    public let queue: String?
    /// The subscription id on the wire.
    public let sid: UInt64
    private let stream: AsyncStream<NATSMessage>
    private let core: ConnectionCore

    init(subject: String, queue: String?, sid: UInt64, stream: AsyncStream<NATSMessage>, core: ConnectionCore) {
        self.subject = subject
        self.queue = queue
        self.sid = sid
        self.stream = stream
        self.core = core
    }

    /// Ends the subscription now: the server stops sending, the sequence ends after what is buffered.
    public func unsubscribe() {
        core.unsubscribe(sid: sid, after: nil)
    }

    /// Ends the subscription after `count` messages in total (the server enforces it too; after a
    /// reconnect it is sent again with what remains).
    public func unsubscribe(after count: Int) {
        core.unsubscribe(sid: sid, after: Swift.max(0, count))
    }

    /// The iterator of the messages.
    public func makeAsyncIterator() -> AsyncStream<NATSMessage>.Iterator {
        stream.makeAsyncIterator()
    }
}
