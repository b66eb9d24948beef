import Synchronization

/// A handler the publisher calls directly. `Payload` is the event type, `Envelope<E>` or
/// `Envelope<any Event>`, as the record's ``SubscriberRecord/Target`` case says.
@usableFromInline final class InlineHandler<Payload>: Sendable {
    @usableFromInline let body: @Sendable (Payload) throws -> Void
    init(_ body: @escaping @Sendable (Payload) throws -> Void) { self.body = body }
}

/// One subscription as the bus keeps it.
@usableFromInline final class SubscriberRecord: Sendable {
    /// Where a publisher puts an event, and in which shape. The publisher, generic over the event
    /// type `E`, downcasts the object without a check: `Value` cases hold `InlineHandler<E>` /
    /// `Mailbox<E>`, `Envelope` cases `…<Envelope<E>>`, `Any` cases `…<Envelope<any Event>>`.
    /// Records with a type filter only route events of that type, so the downcast is exact.
    @usableFromInline enum Target: Sendable {
        case inlineValue(any AnyObject & Sendable)
        case inlineEnvelope(any AnyObject & Sendable)
        case inlineAny(any AnyObject & Sendable)
        case queuedValue(any AnyObject & Sendable)
        case queuedEnvelope(any AnyObject & Sendable)
        case queuedAny(any AnyObject & Sendable)

        var isInline: Bool {
            switch self {
            case .inlineValue, .inlineEnvelope, .inlineAny: true
            default: false
            }
        }

        var isQueuedEnvelope: Bool {
            switch self {
            case .queuedEnvelope, .queuedAny: true
            default: false
            }
        }
    }

    let id: UInt64
    let name: String
    let pattern: TopicPattern?
    let patternTokens: [TopicPattern.Token]?
    let eventType: ObjectIdentifier?
    let eventTypeName: String?
    @usableFromInline let sender: Sender?
    let delivery: Delivery
    @usableFromInline let target: Target
    @usableFromInline let mailbox: (any MailboxControl)?

    @usableFromInline let active = Atomic<Bool>(true)
    @usableFromInline let delivered = Atomic<Int>(0)
    let failed = Atomic<Int>(0)

    init(id: UInt64, name: String, pattern: TopicPattern?, patternTokens: [TopicPattern.Token]?,
         eventType: ObjectIdentifier?, eventTypeName: String?, sender: Sender?, delivery: Delivery,
         target: Target, mailbox: (any MailboxControl)?) {
        self.id = id
        self.name = name
        self.pattern = pattern
        self.patternTokens = patternTokens
        self.eventType = eventType
        self.eventTypeName = eventTypeName
        self.sender = sender
        self.delivery = delivery
        self.target = target
        self.mailbox = mailbox
    }

    @inlinable var isActive: Bool { active.load(ordering: .relaxed) }

    func accepts(eventType type: ObjectIdentifier) -> Bool {
        eventType == nil || eventType == type
    }
}

/// One subscriber as the publish loop sees it: unretained references, so walking a route costs
/// no reference counting.
///
/// `@unchecked Sendable`: a plain value; the pointers are unretained references to a `SubscriberRecord` and to
/// its handler or mailbox object, all immutable and owned by the `Route` that holds this entry
/// (through `Route.subscribers`); a publisher only reads them while it holds that route.
@usableFromInline
struct RouteEntry: @unchecked Sendable {
    @usableFromInline enum Kind: UInt8 {
        case inlineValue, inlineEnvelope, inlineAny, queuedValue, queuedEnvelope, queuedAny
    }

    @usableFromInline let record: UnsafeRawPointer
    @usableFromInline let object: UnsafeRawPointer
    @usableFromInline let kind: Kind
    /// Whether the record filters by sender. The sender itself stays in the record, so an
    /// entry is a plain value: copying one costs no reference counting.
    @usableFromInline let filtersSender: Bool

    init(_ record: SubscriberRecord) {
        self.record = UnsafeRawPointer(Unmanaged.passUnretained(record).toOpaque())
        let object: any AnyObject & Sendable
        switch record.target {
        case .inlineValue(let o): (kind, object) = (.inlineValue, o)
        case .inlineEnvelope(let o): (kind, object) = (.inlineEnvelope, o)
        case .inlineAny(let o): (kind, object) = (.inlineAny, o)
        case .queuedValue(let o): (kind, object) = (.queuedValue, o)
        case .queuedEnvelope(let o): (kind, object) = (.queuedEnvelope, o)
        case .queuedAny(let o): (kind, object) = (.queuedAny, o)
        }
        self.object = UnsafeRawPointer(Unmanaged.passUnretained(object as AnyObject).toOpaque())
        self.filtersSender = record.sender != nil
    }

    @inlinable
    func withRecord<R>(_ body: (SubscriberRecord) throws -> R) rethrows -> R {
        try Unmanaged<SubscriberRecord>.fromOpaque(record)._withUnsafeGuaranteedRef(body)
    }

    @inlinable
    func withObject<T: AnyObject, R>(as type: T.Type, _ body: (T) throws -> R) rethrows -> R {
        try Unmanaged<T>.fromOpaque(object)._withUnsafeGuaranteedRef(body)
    }
}

/// The subscribers one (topic, event type) pair reaches, in subscription order.
@usableFromInline final class Route: Sendable {
    /// Owns the records (and through them the handlers and mailboxes) that `entries` point to.
    @usableFromInline let subscribers: ContiguousArray<SubscriberRecord>
    @usableFromInline let entries: ContiguousArray<RouteEntry>
    /// Whether a nested publish from a handler could overtake this event at a later subscriber,
    /// so delivery must run in a ``DispatchFrame``.
    @usableFromInline let needsFrame: Bool
    /// Whether every subscriber is queued (and there is one): a publish then delivers while it
    /// holds the bus lock, since it only appends to mailboxes and runs no handler.
    @usableFromInline let allQueued: Bool
    /// Whether a queued subscriber takes an envelope, whose timestamp comes from the bus's
    /// clock: a publish delivers under the lock only with a timestamp taken before it.
    @usableFromInline let queuesEnvelopes: Bool

    init(_ subscribers: ContiguousArray<SubscriberRecord>) {
        self.subscribers = subscribers
        self.entries = ContiguousArray(subscribers.map(RouteEntry.init))
        self.needsFrame = subscribers.count > 1 && subscribers.contains { $0.target.isInline }
        self.allQueued = !subscribers.isEmpty && !subscribers.contains { $0.target.isInline }
        self.queuesEnvelopes = subscribers.contains { $0.target.isQueuedEnvelope }
    }

    static let empty = Route([])
}

/// Everything the bus keeps per topic: its route cache and counters.
///
/// `@unchecked Sendable`: `published` and `routes` are read and written only inside
/// `BusCore.state`'s lock; the counters are atomics; the rest is immutable.
@usableFromInline final class TopicSlot: @unchecked Sendable {
    struct CachedRoute {
        let eventType: ObjectIdentifier
        let generation: UInt64
        let route: Route
    }

    let topic: Topic
    let tokens: [String]
    var published: UInt64 = 0
    var routes: [CachedRoute] = []
    /// The route of the topic's usual event type, checked first.
    var primaryType: ObjectIdentifier?
    var primaryGeneration: UInt64 = 0
    var primaryRoute = Route.empty
    @usableFromInline let delivered = Atomic<Int>(0)
    @usableFromInline let dropped = Atomic<Int>(0)
    let failed = Atomic<Int>(0)

    /// `bus.>` topics carry the bus's own reports: their drops and failures are counted but
    /// not reported again, which could otherwise feed itself.
    @usableFromInline let isInternal: Bool

    init(topic: Topic) {
        self.topic = topic
        self.tokens = topic.tokens.map(String.init)
        self.isInternal = tokens.first == "bus"
    }
}
