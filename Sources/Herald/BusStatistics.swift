/// Counts for one topic, from ``EventBus/stats()``.
public struct TopicStatistics: Sendable, Hashable {
    /// Events published on the topic.
    public var published: UInt64
    /// Deliveries completed: a handler returned, or a stream handed the event out.
    public var delivered: Int
    /// Events of this topic dropped by overflowing mailboxes.
    public var dropped: Int
    /// Handler calls on this topic's events that threw.
    public var failed: Int

    public init(published: UInt64, delivered: Int, dropped: Int, failed: Int) {
        self.published = published
        self.delivered = delivered
        self.dropped = dropped
        self.failed = failed
    }
}

/// Counts for one subscription, from ``EventBus/stats()``.
public struct SubscriptionStatistics: Sendable, Hashable {
    /// The subscription's id.
    public var id: UInt64
    /// Its name.
    public var name: String
    /// Its topic pattern, or nil for a subscription to every topic of a type.
    public var pattern: String?
    /// Its event type, or nil for a pattern subscription.
    public var eventType: String?
    /// How it receives events.
    public var delivery: String
    /// Events its handler (or stream) received.
    public var delivered: Int
    /// Events its mailbox dropped under the overflow policy.
    public var dropped: Int
    /// Handler calls that threw.
    public var failed: Int
    /// Events discarded undelivered: waiting when the subscription ended or the bus's shutdown
    /// deadline came, or arriving after it finished draining.
    public var discarded: Int
    /// Events waiting in its mailbox now (0 for inline delivery).
    public var queueDepth: Int
    /// The most events that ever waited in its mailbox at once.
    public var highWaterMark: Int
}

/// A snapshot of a bus's counters.
public struct BusStatistics: Sendable {
    /// Events published on this bus (its last sequence number when
    /// ``EventBus/Configuration/firstSequence`` is the default, 1).
    public var published: UInt64
    /// Per topic.
    public var topics: [Topic: TopicStatistics]
    /// Per live subscription, in subscription order.
    public var subscriptions: [SubscriptionStatistics]

    /// The statistics of the live subscription named `name`.
    public func subscription(named name: String) -> SubscriptionStatistics? {
        subscriptions.first { $0.name == name }
    }
}

extension EventBus {
    /// A snapshot of the bus's counters: per topic and per live subscription. Counters are
    /// updated without stopping publishers, so a snapshot taken during publishing may be a
    /// batch behind for queued subscriptions.
    public func stats() -> BusStatistics {
        core.state.withLock { s in
            var topics: [Topic: TopicStatistics] = [:]
            for slot in s.slots {
                topics[slot.topic] = TopicStatistics(
                    published: slot.published, delivered: slot.delivered.load(ordering: .relaxed),
                    dropped: slot.dropped.load(ordering: .relaxed), failed: slot.failed.load(ordering: .relaxed))
            }
            let subscriptions = s.records.values.sorted { $0.id < $1.id }.map { record in
                let mailbox = record.mailbox?.snapshotHoldingLock
                return SubscriptionStatistics(
                    id: record.id, name: record.name, pattern: record.pattern?.pattern,
                    eventType: record.eventTypeName, delivery: record.delivery.description,
                    delivered: record.delivered.load(ordering: .relaxed), dropped: mailbox?.dropped ?? 0,
                    failed: record.failed.load(ordering: .relaxed), discarded: mailbox?.discarded ?? 0,
                    queueDepth: mailbox?.depth ?? 0,
                    highWaterMark: mailbox?.highWaterMark ?? 0)
            }
            return BusStatistics(published: s.sequence &- core.sequenceBase, topics: topics, subscriptions: subscriptions)
        }
    }
}
