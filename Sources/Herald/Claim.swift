#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the locked step of a publish hands back.
@usableFromInline
struct Claim: Sendable {
    @usableFromInline let sequence: UInt64
    @usableFromInline let slot: Unmanaged<TopicSlot>
    /// Unretained for a counted publish: the slot's cache, or the bus's retired routes, keep it
    /// while any counted publish is in flight (see `BusState.retiredRoutes`), which saves two
    /// atomic reference-count operations per publish. Retained (+1) for an uncounted one, which
    /// releases it when done.
    @usableFromInline let route: Unmanaged<Route>
    /// The timestamp of a retained event's envelope, so that every delivered envelope of the
    /// event carries the same one; nil otherwise (made on first use).
    @usableFromInline let timestamp: Date?
    /// Accepted while the bus was running, so shutdown waits for it to finish. The bus's own
    /// reports posted while it drains are not: they must not stand in for an accepted publish.
    @usableFromInline let counted: Bool
}

/// The locked step's numbering of an event (``BusCore/numberLocked(_:_:eventType:isInternal:)``).
@usableFromInline
struct Numbered {
    @usableFromInline let sequence: UInt64
    @usableFromInline let slot: Unmanaged<TopicSlot>
    /// Unretained: valid while the lock is held.
    @usableFromInline let route: Unmanaged<Route>
    /// Routes wait to be released and no counted publish is in flight: a publish that ends under
    /// the lock releases them (``BusCore/releaseRetiredRoutes()``).
    @usableFromInline let retiredRoutes: Bool
}

/// What ``BusCore/claimDelivering(_:sender:correlation:isInternal:mayExceed:)`` did.
@usableFromInline
enum DeliveredOrClaimed: Sendable {
    /// Delivered to every subscriber: the publish is over; its sequence number.
    case delivered(UInt64)
    /// To deliver after the lock from subscriber `resumeAt`, and then to finish.
    case claimed(Publication, Unmanaged<Route>, resumeAt: Int)
}
