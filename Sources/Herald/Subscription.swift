/// A live subscription. Keep it for as long as you want events.
///
/// The subscription ends when you call ``cancel()``, when this object is deinitialised, or (for
/// an ``EventStream``) when the iterating task is cancelled. After `cancel()` returns, no handler
/// call starts except one another thread was already starting at that instant (an inline
/// delivery racing the cancel), and events still waiting in its mailbox are discarded. The bus holds
/// the handler only while the subscription lives, so an object the handler captures is freed
/// once its subscription is gone.
public final class Subscription: Sendable, Hashable, CustomStringConvertible {
    let core: BusCore
    @usableFromInline let record: SubscriberRecord

    init(core: BusCore, record: SubscriberRecord) {
        self.core = core
        self.record = record
    }

    deinit {
        core.cancel(id: record.id)
    }

    /// The subscription's id, unique within its bus.
    public var id: UInt64 { record.id }

    /// The subscription's name (given at subscribe, or made from its type or pattern), used in
    /// `bus.subscriber.failed` and `bus.dropped` events and in ``EventBus/stats()``.
    public var name: String { record.name }

    /// Whether the subscription still receives events.
    public var isActive: Bool { record.isActive }

    /// Ends the subscription. Safe to call more than once, from any task or handler.
    public func cancel() {
        core.cancel(id: record.id)
    }

    /// Ends the subscription after its queued handler or stream has received every event
    /// waiting in its mailbox: events published from now on are not routed to it. Returns once
    /// they are delivered. For an inline subscription it is ``cancel()``.
    ///
    /// What a subscriber that is replaced uses, so that what it accepted is not lost.
    public func drain() async {
        await core.retire(id: record.id)
    }

    public var description: String { "Subscription(\(record.id), \(record.name))" }

    public static func == (lhs: Subscription, rhs: Subscription) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
