#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HeraldSync
import Synchronization

/// The delivery of one event to the subscribers of its route, in order.
extension BusCore {
    /// Delivers to `route.subscribers[start...]` in order. Returns the index of a subscriber
    /// whose `.wait` mailbox was full (only when `mayExceed` is false), or nil when done.
    @inlinable
    func deliver<E: Event>(_ event: E, _ p: inout Publication, route: Unmanaged<Route>, from start: Int,
                           mayExceed: Bool) -> Int? {
        route._withUnsafeGuaranteedRef { route in deliver(event, &p, route: route, from: start, mayExceed: mayExceed) }
    }

    /// The same, with the route in hand.
    @inlinable
    func deliver<E: Event>(_ event: E, _ p: inout Publication, route: Route, from start: Int, mayExceed: Bool) -> Int? {
        var work = MailboxWork()
        // Optional, so a publish without drops does not even touch an empty array.
        var drops: [(SubscriberRecord, Int, Int)]?
        let blocked = deliverEntries(event, &p, route: route, from: start, mayExceed: mayExceed, locked: false,
                                     work: &work, drops: &drops)
        if let drops { reportDrops(drops) }
        return blocked
    }

    /// Delivers to `route.subscribers[start...]` in order; returns the index of a subscriber
    /// whose `.wait` mailbox was full (only when `mayExceed` is false), or nil when done. Drops
    /// to report are added to `drops`. `locked`: the bus lock is held (the route is all queued),
    /// so consumers are woken and dropped events released by the caller after it, from `work`;
    /// otherwise after each mailbox.
    @inlinable
    func deliverEntries<E: Event>(_ event: E, _ p: inout Publication, route: Route, from start: Int, mayExceed: Bool,
                                  locked: Bool, work: inout MailboxWork,
                                  drops: inout [(SubscriberRecord, Int, Int)]?) -> Int? {
        var delivered = 0
        var blocked: Int?
        route.entries.withUnsafeBufferPointer { entries in
            var index = start
            while index < entries.count {
                let entry = entries[index]
                index += 1
                entry.withRecord { record in
                    guard record.isActive else { return }
                    if entry.filtersSender, record.sender != p.sender { return }
                    let outcome: OfferOutcome
                    switch entry.kind {
                    case .inlineValue:
                        do {
                            try entry.withObject(as: InlineHandler<E>.self) { try $0.body(event) }
                            record.delivered.wrappingAdd(1, ordering: .relaxed)
                            delivered += 1
                        } catch {
                            reportFailure(record, slot: p.slot, sequence: p.sequence, error: error)
                        }
                        return
                    case .inlineEnvelope:
                        do {
                            let envelope = Envelope(p.envelopeHeader(self), event: event)
                            try entry.withObject(as: InlineHandler<Envelope<E>>.self) { try $0.body(envelope) }
                            record.delivered.wrappingAdd(1, ordering: .relaxed)
                            delivered += 1
                        } catch {
                            reportFailure(record, slot: p.slot, sequence: p.sequence, error: error)
                        }
                        return
                    case .inlineAny:
                        do {
                            let envelope = Envelope(p.envelopeHeader(self), event: event as any Event)
                            try entry.withObject(as: InlineHandler<Envelope<any Event>>.self) { try $0.body(envelope) }
                            record.delivered.wrappingAdd(1, ordering: .relaxed)
                            delivered += 1
                        } catch {
                            reportFailure(record, slot: p.slot, sequence: p.sequence, error: error)
                        }
                        return
                    case .queuedValue:
                        let item = p.item(event)
                        outcome = entry.withObject(as: Mailbox<E>.self) {
                            locked ? $0.offerHoldingLock(item, mayExceed: mayExceed, deferring: &work)
                                   : $0.offer(item, mayExceed: mayExceed, work: &work)
                        }
                    case .queuedEnvelope:
                        let item = MailboxItem(payload: Envelope(p.envelopeHeader(self), event: event),
                                               slot: p.slot, sequence: p.sequence)
                        outcome = entry.withObject(as: Mailbox<Envelope<E>>.self) {
                            locked ? $0.offerHoldingLock(item, mayExceed: mayExceed, deferring: &work)
                                   : $0.offer(item, mayExceed: mayExceed, work: &work)
                        }
                    case .queuedAny:
                        let item = MailboxItem(payload: Envelope(p.envelopeHeader(self), event: event as any Event),
                                               slot: p.slot, sequence: p.sequence)
                        outcome = entry.withObject(as: Mailbox<Envelope<any Event>>.self) {
                            locked ? $0.offerHoldingLock(item, mayExceed: mayExceed, deferring: &work)
                                   : $0.offer(item, mayExceed: mayExceed, work: &work)
                        }
                    }
                    if let handedOver = work.drops {
                        work.drops = nil
                        drops = (drops ?? []) + [(record, handedOver.count, handedOver.total)]
                    }
                    // A queued event counts as delivered when its subscriber's task hands it over.
                    switch outcome {
                    case .accepted, .closed:
                        break
                    case .full:
                        blocked = index - 1
                        index = entries.count
                    case .dropped(let slot, _, let report, let total):
                        slot._withUnsafeGuaranteedRef { _ = $0.dropped.wrappingAdd(1, ordering: .relaxed) }
                        if report > 0 { drops = (drops ?? []) + [(record, report, total)] }
                    }
                }
            }
        }
        if delivered > 0 { p.slot._withUnsafeGuaranteedRef { _ = $0.delivered.wrappingAdd(delivered, ordering: .relaxed) } }
        return blocked
    }
}
