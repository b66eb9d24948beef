/// Published on `bus.subscriber.failed` when a subscriber's handler throws.
///
/// The failing subscriber does not affect the others; this event is how its failure becomes
/// visible. A handler that throws while handling one of the bus's own events (`bus.>`) is
/// counted in ``EventBus/stats()`` but not reported, so a failing reporter cannot loop.
public struct SubscriberFailed: Event, Hashable {
    /// `bus.subscriber.failed`.
    public static let topic: Topic = "bus.subscriber.failed"
    public var topic: Topic { Self.topic }

    /// The failing subscription's name.
    public var subscription: String
    /// The failing subscription's id.
    public var subscriptionID: UInt64
    /// The topic of the event the handler threw on.
    public var eventTopic: Topic
    /// The sequence number of the event the handler threw on.
    public var eventSequence: UInt64
    /// What the handler threw, as text.
    public var error: String

    public init(subscription: String, subscriptionID: UInt64, eventTopic: Topic, eventSequence: UInt64, error: String) {
        self.subscription = subscription
        self.subscriptionID = subscriptionID
        self.eventTopic = eventTopic
        self.eventSequence = eventSequence
        self.error = error
    }
}

/// Published on `bus.dropped` when a bounded mailbox drops events under its overflow policy.
///
/// Reports are coalesced: the first drop is reported at once, later ones are summed until the
/// subscriber's task takes its next batch. `total` is the subscription's running total. Drops of
/// the bus's own events (`bus.>`) are counted but not reported.
public struct EventsDropped: Event, Hashable {
    /// `bus.dropped`.
    public static let topic: Topic = "bus.dropped"
    public var topic: Topic { Self.topic }

    /// The overflowing subscription's name.
    public var subscription: String
    /// The overflowing subscription's id.
    public var subscriptionID: UInt64
    /// The policy that dropped them.
    public var policy: OverflowPolicy
    /// Events dropped since the previous report.
    public var count: Int
    /// Events dropped by this subscription so far.
    public var total: Int

    public init(subscription: String, subscriptionID: UInt64, policy: OverflowPolicy, count: Int, total: Int) {
        self.subscription = subscription
        self.subscriptionID = subscriptionID
        self.policy = policy
        self.count = count
        self.total = total
    }
}

/// Published on `bus.deadletter` for an event no subscription received, when the bus was made
/// with ``EventBus/Configuration/deadLetters`` on.
public struct DeadLetter: Event, Hashable {
    /// `bus.deadletter`.
    public static let topic: Topic = "bus.deadletter"
    public var topic: Topic { Self.topic }

    /// The undelivered event's topic.
    public var eventTopic: Topic
    /// Its id.
    public var eventID: EventID
    /// Its sender, if any.
    public var sender: Sender?
    /// Its Swift type name.
    public var eventType: String
    /// The event encoded as JSON (empty when it could not be encoded).
    public var json: String

    public init(eventTopic: Topic, eventID: EventID, sender: Sender?, eventType: String, json: String) {
        self.eventTopic = eventTopic
        self.eventID = eventID
        self.sender = sender
        self.eventType = eventType
        self.json = json
    }
}
