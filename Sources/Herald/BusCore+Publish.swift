#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HeraldSync
import Synchronization

// The publish path is `@inlinable` so that it is specialised for each event type in the
// caller's module: unspecialised, every publish paid for runtime generic-metadata lookups.
// What it touches is `@usableFromInline`; the locked part (`claim`) is not generic and stays
// opaque.

extension BusCore {
    /// Synchronous publish: routes, then delivers before returning. Never waits: a full
    /// `.wait` mailbox takes the event beyond its capacity.
    @inlinable
    func post<E: Event>(_ event: E, sender: Sender?, correlation: EventID?, retention: Retention,
                        isInternal: Bool) throws(EventBusError) -> UInt64 {
        var publication: Publication
        let claimedRoute: Unmanaged<Route>
        // Delivery under the lock is for a publish outside every dispatch frame: one from inside
        // a handler's delivery must join that frame (below).
        if !retention.enabled, openFrames.load(ordering: .relaxed) == 0 {
            switch try claimDelivering(event, sender: sender, correlation: correlation, isInternal: isInternal,
                                       mayExceed: true) {
            case .delivered(let sequence):
                return sequence
            case .claimed(let claimed, let route, _):
                // Not all queued (a synchronous publish never waits, so never stops midway).
                (publication, claimedRoute) = (claimed, route)
            }
        } else {
            (publication, claimedRoute) = try claim(event, sender: sender, correlation: correlation,
                                                    retention: retention, isInternal: isInternal)
        }
        defer { finish(publication, claimedRoute) }
        let route = claimedRoute
        let sequence = publication.sequence
        if route._withUnsafeGuaranteedRef({ $0.subscribers.isEmpty }) {
            if configuration.deadLetters { deadLetter(event, &publication) }
            return sequence
        }
        // A publish from inside a handler joins the frame of the delivery that is running, so
        // it reaches every subscriber after the event being delivered.
        if openFrames.load(ordering: .relaxed) > 0, let frame = currentFrame() {
            let deferred = publication
            // Retained by the closure, which may run after this publish has finished.
            let deferredRoute = route.takeUnretainedValue()
            if frame.defer({
                var publication = deferred
                withExtendedLifetime(deferredRoute) {
                    _ = self.deliver(event, &publication, route: .passUnretained(deferredRoute), from: 0,
                                     mayExceed: true)
                }
            }) {
                return sequence
            }
        }
        if route._withUnsafeGuaranteedRef({ $0.needsFrame }) {
            _ = inFrame { deliver(event, &publication, route: route, from: 0, mayExceed: true) }
        } else {
            _ = deliver(event, &publication, route: route, from: 0, mayExceed: true)
        }
        return sequence
    }

    /// Asynchronous publish: like ``post``, but waits for room in full `.wait` mailboxes.
    ///
    /// Always inlined into the caller: called, an async function makes its caller switch back
    /// to its executor when it returns (`swift_task_switch`, which looks up the task's executor
    /// preference), a tenth of a queued publish's time; inlined, a publish that never suspends
    /// switches nothing.
    @inlinable @inline(__always)
    func publish<E: Event>(_ event: E, sender: Sender?, correlation: EventID?, retention: Retention)
        async throws(EventBusError) -> UInt64
    {
        // Only what is not delivered under the lock (a full mailbox, an inline subscriber, a
        // retained event) goes on in an async function that is called; the usual publish to
        // queued subscribers stays inlined and synchronous.
        guard !retention.enabled else {
            let (publication, route) = try claim(event, sender: sender, correlation: correlation,
                                                 retention: retention, isInternal: false)
            return await publishClaimed(event, publication, route, from: 0)
        }
        switch try claimDelivering(event, sender: sender, correlation: correlation, isInternal: false,
                                   mayExceed: false) {
        case .delivered(let sequence):
            return sequence
        case .claimed(let publication, let route, let resumeAt):
            return await publishClaimed(event, publication, route, from: resumeAt)
        }
    }

    /// Delivers a claimed publish from subscriber `start` (0 when none was delivered under the
    /// lock), waiting for room in full mailboxes; then finishes it.
    @inlinable
    func publishClaimed<E: Event>(_ event: E, _ claimed: Publication, _ route: Unmanaged<Route>, from start: Int)
        async -> UInt64
    {
        var publication = claimed
        defer { finish(publication, route) }
        let sequence = publication.sequence
        if start > 0 {
            // All queued, stopped at a full mailbox under the lock: wait for room from there on.
            await deliverWaiting(event, &publication, route: route, from: start)
            return sequence
        }
        if route._withUnsafeGuaranteedRef({ $0.subscribers.isEmpty }) {
            if configuration.deadLetters { deadLetter(event, &publication) }
            return sequence
        }
        if route._withUnsafeGuaranteedRef({ $0.needsFrame }) {
            // One frame for the whole publish, across its waits: what handlers publish meanwhile
            // is delivered after this event has reached every subscriber.
            await inFrame {
                if let blocked = deliver(event, &publication, route: route, from: 0, mayExceed: false) {
                    await deliverWaiting(event, &publication, route: route, from: blocked)
                }
            }
        } else if let blocked = deliver(event, &publication, route: route, from: 0, mayExceed: false) {
            await deliverWaiting(event, &publication, route: route, from: blocked)
        }
        return sequence
    }

    /// Ends a publish: counts it as finished, or releases the route an uncounted one retained.
    @inlinable
    func finish(_ publication: Publication, _ route: Unmanaged<Route>) {
        if publication.counted { publishFinished() } else { route.release() }
    }

    /// Delivers to `route.subscribers[blocked...]`, waiting for room in full `.wait` mailboxes.
    /// A cancelled task waits no more: the event goes into the full mailbox.
    @inlinable
    func deliverWaiting<E: Event>(_ event: E, _ publication: inout Publication, route: Unmanaged<Route>,
                                  from blocked: Int) async {
        var next = blocked
        while true {
            if Task.isCancelled {
                _ = deliver(event, &publication, route: route, from: next, mayExceed: true)
                return
            }
            if let mailbox = route._withUnsafeGuaranteedRef({ $0.subscribers[next].mailbox }) {
                await mailbox.waitForSpace()
            }
            guard let blocked = deliver(event, &publication, route: route, from: next, mayExceed: Task.isCancelled) else {
                return
            }
            next = blocked
        }
    }

    /// Publishes `bus.deadletter` for an event nobody subscribed to.
    @usableFromInline
    func deadLetter<E: Event>(_ event: E, _ p: inout Publication) {
        guard E.self != DeadLetter.self else { return }
        let header = p.envelopeHeader(self)
        let json = (try? JSONEncoder().encode(event)).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        let letter = DeadLetter(eventTopic: p.topic, eventID: header.id, sender: p.sender,
                                eventType: String(reflecting: E.self), json: json)
        _ = try? post(letter, sender: nil, correlation: header.correlationID, retention: .none, isInternal: true)
    }
}
