#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HeraldSync
import Synchronization

/// The locked step of a publish: refuse, number, count, find the route; and, when every
/// subscriber is queued, deliver under the same lock.
extension BusCore {
    @usableFromInline
    func makeHeader(topic: Topic, sender: Sender?, sequence: UInt64, correlation: EventID?,
                    timestamp: Date? = nil) -> EnvelopeHeader {
        let id = eventID(sequence)
        return EnvelopeHeader(topic: topic, sender: sender, id: id, correlationID: correlation ?? id,
                              timestamp: timestamp ?? now())
    }

    /// Numbers the event and finds its route, under the lock (an event that is not retained).
    @usableFromInline
    func claim(_ topic: Topic, eventType type: ObjectIdentifier, isInternal: Bool) throws(EventBusError) -> Claim {
        guard topic.isValid else { throw invalidTopic(topic) }
        return try state.withLock { s throws(EventBusError) in
            try claimLocked(&s, topic, eventType: type, isInternal: isInternal, timestamp: nil)
        }
    }

    /// The same for a retained event: stores its envelope as the topic's retained event.
    @usableFromInline
    func claimRetained(_ topic: Topic, eventType type: ObjectIdentifier, sender: Sender?, correlation: EventID?,
                       isInternal: Bool, retention: Retention,
                       retained: (EnvelopeHeader) -> Envelope<any Event>) throws(EventBusError) -> Claim {
        guard topic.isValid else { throw invalidTopic(topic) }
        let stamp = now()
        // A replaced retained event is released after the lock: its deinit may use the bus.
        var replaced: RetainedEvent?
        defer { _ = replaced }
        return try state.withLock { s throws(EventBusError) in
            let claim = try claimLocked(&s, topic, eventType: type, isInternal: isInternal, timestamp: stamp)
            let made = makeHeader(topic: topic, sender: sender, sequence: claim.sequence,
                                  correlation: correlation, timestamp: stamp)
            let expires = retention.timeToLive.map { stamp.addingTimeInterval($0.timeInterval) }
            replaced = s.retained.updateValue(
                RetainedEvent(envelope: retained(made), eventType: type, expires: expires), forKey: topic.index)
            return claim
        }
    }

    /// The locked part of every claim: refuses a publish once the bus drains (but for the bus's
    /// own reports), numbers the event, counts it on its topic and finds its route.
    @inline(__always)
    func claimLocked(_ s: inout BusState, _ topic: Topic, eventType type: ObjectIdentifier, isInternal: Bool,
                     timestamp: Date?) throws(EventBusError) -> Claim {
        let numbered = try numberLocked(&s, topic, eventType: type, isInternal: isInternal)
        return accountLocked(&s, slot: numbered.slot, route: numbered.route, timestamp: timestamp)
    }

    /// Refuses a publish once the bus drains (but for the bus's own reports), numbers the
    /// event, counts it on its topic and finds its route (unretained: valid while the lock is
    /// held).
    @usableFromInline
    func numberLocked(_ s: inout BusState, _ topic: Topic, eventType type: ObjectIdentifier,
                      isInternal: Bool) throws(EventBusError) -> Numbered {
        guard topic.isValid else { throw invalidTopic(topic) }
        guard s.phase == .running || (isInternal && s.phase == .draining) else {
            throw .shutDown("publishing on \(topic)")
        }
        s.sequence &+= 1
        let unmanagedSlot = s.slot(for: topic)
        let route = unmanagedSlot._withUnsafeGuaranteedRef { slot in
            slot.published &+= 1
            return s.route(slot, eventType: type)
        }
        // A rebuilt route retired the old one. It can be released once no counted publish is in
        // flight: the last one to finish looks when this flag is set; a publish delivered under
        // the lock, never counted, releases it at once when none is.
        var releasable = false
        if !s.retiredRoutes.isEmpty {
            retiredRoutesPending.store(true, ordering: .sequentiallyConsistent)
            releasable = finishedPublishes.load(ordering: .sequentiallyConsistent) == s.accepted
        }
        return Numbered(sequence: s.sequence, slot: unmanagedSlot, route: route, retiredRoutes: releasable)
    }

    /// Counts a publish delivered under the lock as in flight while the bus runs (its drop reports
    /// are still to post); true if it did.
    @usableFromInline
    func countLocked(_ s: inout BusState) -> Bool {
        guard s.phase == .running else { return false }
        s.accepted &+= 1
        return true
    }

    /// Makes a numbered event a publish that continues after the lock: counted while the bus
    /// runs (shutdown waits for it; its route stays alive until it finishes), else its route
    /// retained.
    @usableFromInline
    func accountLocked(_ s: inout BusState, slot: Unmanaged<TopicSlot>, route: Unmanaged<Route>,
                       timestamp: Date?) -> Claim {
        let counted = s.phase == .running
        if counted { s.accepted &+= 1 }
        return Claim(sequence: s.sequence, slot: slot, route: counted ? route : route.retain(),
                     timestamp: timestamp, counted: counted)
    }

    func invalidTopic(_ topic: Topic) -> EventBusError {
        topic.validationError() ?? .invalidTopic(topic.name, reason: "invalid")
    }

    /// Claims an event that is not retained and, when every subscriber on its route is queued,
    /// delivers it while the bus lock is held: the publish then only appends to mailboxes, whose
    /// state the same lock guards, and is over when the lock is released. It needs no in-flight
    /// accounting (shutdown, which takes the lock to close the doors, cannot see it half done)
    /// and costs one lock in all. A publish that meets a full `.wait` mailbox (it may not exceed
    /// the capacity), or whose route has inline subscribers, comes back claimed, to finish after
    /// the lock from subscriber `resumeAt` (0 when nothing was delivered). Consumers are woken,
    /// dropped events released and drops reported after the lock.
    @inlinable
    func claimDelivering<E: Event>(_ event: E, sender: Sender?, correlation: EventID?, isInternal: Bool,
                                   mayExceed: Bool) throws(EventBusError) -> DeliveredOrClaimed {
        let topic = event.topic
        var work = MailboxWork()
        var drops: [(SubscriberRecord, Int, Int)]?
        var retiredRoutes = false
        var countedForReports = false
        // The clock is user code and may use the bus: never call it under the lock.
        let stamp = queuedEnvelopes.load(ordering: .relaxed) ? now() : nil
        let outcome = try state.withLock { s throws(EventBusError) -> DeliveredOrClaimed in
            let numbered = try numberLocked(&s, topic, eventType: ObjectIdentifier(E.self), isInternal: isInternal)
            var p = Publication(topic: topic, sender: sender, correlation: correlation, sequence: numbered.sequence,
                                slot: numbered.slot, counted: false, timestamp: stamp)
            var resumeAt = 0
            // An envelope subscription made since `stamp` was decided sends this one the old way.
            if numbered.route._withUnsafeGuaranteedRef({ $0.allQueued && (stamp != nil || !$0.queuesEnvelopes) }) {
                let blocked = numbered.route._withUnsafeGuaranteedRef { route in
                    deliverEntries(event, &p, route: route, from: 0, mayExceed: mayExceed, locked: true,
                                   work: &work, drops: &drops)
                }
                guard let blocked else {
                    retiredRoutes = numbered.retiredRoutes
                    // Its drops are reported after the lock: until they are, it counts as in
                    // flight, so that shutdown waits for the reports.
                    if drops != nil { countedForReports = countLocked(&s) }
                    return .delivered(numbered.sequence)
                }
                resumeAt = blocked
            }
            let claim = accountLocked(&s, slot: numbered.slot, route: numbered.route, timestamp: nil)
            p.counted = claim.counted
            return .claimed(p, claim.route, resumeAt: resumeAt)
        }
        if work.isPending { work.run() }
        if let drops { reportDrops(drops) }
        if countedForReports { publishFinished() }
        // A rebuilt route retired the old one; with no publish to finish, this one releases it.
        if retiredRoutes { releaseRetiredRoutes() }
        return outcome
    }

    @inlinable
    func claim<E: Event>(_ event: E, sender: Sender?, correlation: EventID?, retention: Retention,
                         isInternal: Bool) throws(EventBusError) -> (Publication, Unmanaged<Route>) {
        let topic = event.topic
        let claim: Claim
        if retention.enabled {
            claim = try claimRetained(topic, eventType: ObjectIdentifier(E.self), sender: sender,
                                      correlation: correlation, isInternal: isInternal, retention: retention,
                                      retained: { Envelope($0, event: event as any Event) })
        } else {
            claim = try self.claim(topic, eventType: ObjectIdentifier(E.self), isInternal: isInternal)
        }
        return (Publication(topic: topic, sender: sender, correlation: correlation, claim: claim),
                claim.route)
    }
}
