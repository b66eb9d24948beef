import Synchronization

extension EventBus {
    /// Subscribes to events of one type, receiving the values.
    ///
    /// - Parameters:
    ///   - type: the event type.
    ///   - pattern: only events whose topic matches (all topics of the type when nil).
    ///   - sender: only events published `from:` this sender (NotificationCenter's `object:`).
    ///   - name: a name for stats and failure events.
    ///   - delivery: ``Delivery/inline`` (on the publisher, the default) or ``Delivery/queued(capacity:overflow:)``.
    ///   - handler: called once per event; a thrown error becomes a ``SubscriberFailed`` event.
    /// - Returns: the subscription; it ends when this object is released or cancelled.
    /// - Throws: ``EventBusError`` for an invalid pattern or capacity, or a shut-down bus.
    @inlinable
    public func subscribe<E: Event>(
        to type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        delivery: Delivery = .inline, _ handler: @escaping @Sendable (E) throws -> Void
    ) throws(EventBusError) -> Subscription {
        try subscribe(request(.value, type, pattern, sender, name, delivery), handler) { $0.event as? E }
    }

    /// Subscribes an object weakly: the handler gets the object while it lives, and the
    /// subscription ends by itself once the object is freed (as NotificationCenter's
    /// selector-based observers do). Storing the returned subscription in the object makes no
    /// retain cycle.
    public func subscribe<E: Event, Observer: AnyObject & Sendable>(
        to type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        delivery: Delivery = .inline, observer: Observer,
        _ handler: @escaping @Sendable (Observer, E) throws -> Void
    ) throws(EventBusError) -> Subscription {
        let box = WeakSubscriptionBox(core: core)
        let subscription = try subscribe(to: type, on: pattern, from: sender, name: name, delivery: delivery) {
            [weak observer] event in
            guard let observer else {
                box.cancel()
                return
            }
            try handler(observer, event)
        }
        box.id.store(subscription.id, ordering: .releasing)
        return subscription
    }

    /// Subscribes to events of one type, receiving each in an ``Envelope`` (topic, sender,
    /// sequence number, timestamp, correlation id).
    @inlinable
    public func subscribe<E: Event>(
        envelopesOf type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        delivery: Delivery = .inline, _ handler: @escaping @Sendable (Envelope<E>) throws -> Void
    ) throws(EventBusError) -> Subscription {
        try subscribe(request(.envelope, type, pattern, sender, name, delivery), handler) { envelope in
            (envelope.event as? E).map { event in envelope.map { _ in event } }
        }
    }

    /// Subscribes to every event whose topic matches `pattern`, whatever its type, receiving
    /// envelopes (`loader.*.failed`, `bus.>`).
    @inlinable
    public func subscribe(
        matching pattern: TopicPattern, from sender: Sender? = nil, name: String? = nil,
        delivery: Delivery = .inline, _ handler: @escaping @Sendable (Envelope<any Event>) throws -> Void
    ) throws(EventBusError) -> Subscription {
        try subscribe(patternRequest(pattern, sender, name, delivery), handler) { $0 }
    }

    /// Subscribes a main-actor handler (UI code): events go through a bounded mailbox drained on
    /// the main actor, in order.
    public func subscribeOnMainActor<E: Event>(
        to type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait,
        _ handler: @escaping @MainActor @Sendable (E) throws -> Void
    ) throws(EventBusError) -> Subscription {
        let delivery = Delivery.queued(capacity: capacity, overflow: overflow)
        return try core.subscribe(request(.value, type, pattern, sender, name, delivery), consumer: .mainActor(handler)) {
            $0.event as? E
        }.0
    }

    /// Subscribes a main-actor handler to every event matching `pattern`.
    public func subscribeOnMainActor(
        matching pattern: TopicPattern, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait,
        _ handler: @escaping @MainActor @Sendable (Envelope<any Event>) throws -> Void
    ) throws(EventBusError) -> Subscription {
        let delivery = Delivery.queued(capacity: capacity, overflow: overflow)
        return try core.subscribe(patternRequest(pattern, sender, name, delivery), consumer: .mainActor(handler)) { $0 }.0
    }

    // MARK: Streams

    /// The events of one type as an `AsyncSequence`, read through a bounded mailbox.
    public func events<E: Event>(
        of type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait
    ) throws(EventBusError) -> EventStream<E> {
        let delivery = Delivery.queued(capacity: capacity, overflow: overflow)
        return try stream(core.subscribe(request(.value, type, pattern, sender, name, delivery), consumer: .stream) {
            $0.event as? E
        })
    }

    /// The envelopes of one type's events as an `AsyncSequence`.
    public func envelopes<E: Event>(
        of type: E.Type, on pattern: TopicPattern? = nil, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait
    ) throws(EventBusError) -> EventStream<Envelope<E>> {
        let delivery = Delivery.queued(capacity: capacity, overflow: overflow)
        return try stream(core.subscribe(request(.envelope, type, pattern, sender, name, delivery), consumer: .stream) {
            envelope in (envelope.event as? E).map { event in envelope.map { _ in event } }
        })
    }

    /// The envelopes of every event matching `pattern` as an `AsyncSequence`.
    public func envelopes(
        matching pattern: TopicPattern, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait
    ) throws(EventBusError) -> EventStream<Envelope<any Event>> {
        let delivery = Delivery.queued(capacity: capacity, overflow: overflow)
        return try stream(core.subscribe(patternRequest(pattern, sender, name, delivery), consumer: .stream) { $0 })
    }

    // MARK: Helpers

    /// Registers an inline or queued handler. Inlinable, so a queued subscriber's task loop is
    /// specialised for its payload in the caller's module.
    @inlinable
    func subscribe<Payload: Sendable>(
        _ request: SubscriptionRequest, _ handler: @escaping @Sendable (Payload) throws -> Void,
        convert: (Envelope<any Event>) -> Payload?
    ) throws(EventBusError) -> Subscription {
        if request.delivery == .inline {
            return try core.subscribe(request, consumer: .inline(handler), convert: convert).0
        }
        let (subscription, mailbox) = try core.subscribe(request, consumer: .stream, convert: convert)
        if let mailbox { core.startConsumer(mailbox, record: subscription.record, handler: handler) }
        return subscription
    }

    @usableFromInline
    func request<E: Event>(_ shape: Shape, _ type: E.Type, _ pattern: TopicPattern?, _ sender: Sender?,
                                   _ name: String?, _ delivery: Delivery) -> SubscriptionRequest {
        SubscriptionRequest(shape: shape, eventType: ObjectIdentifier(type), eventTypeName: String(describing: type),
                            pattern: pattern, sender: sender, name: name, delivery: delivery)
    }

    @usableFromInline
    func patternRequest(_ pattern: TopicPattern, _ sender: Sender?, _ name: String?,
                                _ delivery: Delivery) -> SubscriptionRequest {
        SubscriptionRequest(shape: .anyEnvelope, eventType: nil, eventTypeName: nil, pattern: pattern,
                            sender: sender, name: name, delivery: delivery)
    }

    private func stream<P>(_ made: (Subscription, Mailbox<P>?)) throws(EventBusError) -> EventStream<P> {
        guard let mailbox = made.1 else { throw .invalidOption("a stream needs a mailbox") }
        return EventStream(mailbox: mailbox, subscription: made.0)
    }
}

/// Lets a weakly held observer's handler end its own subscription once the observer is gone.
final class WeakSubscriptionBox: Sendable {
    let core: BusCore
    let id = Atomic<UInt64>(0)

    init(core: BusCore) { self.core = core }

    func cancel() {
        let id = id.load(ordering: .acquiring)
        if id != 0 { core.cancel(id: id) }
    }
}
