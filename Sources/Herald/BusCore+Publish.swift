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

/// One event on its way to its subscribers: everything but the event itself, which travels
/// beside it. Not generic, so the publish path copies and destroys it with concrete code (a
/// generic aggregate was destroyed through its value witnesses, on every publish).
@usableFromInline
struct Publication: Sendable {
    @usableFromInline let topic: Topic
    @usableFromInline let sender: Sender?
    @usableFromInline let sequence: UInt64
    @usableFromInline let correlation: EventID?
    @usableFromInline let slot: Unmanaged<TopicSlot>
    @usableFromInline var counted: Bool
    /// Made on first use: subscribers that take the bare value need no timestamp. The rest of
    /// the envelope's header is already here, so only the timestamp is kept.
    @usableFromInline var timestamp: Date?

    @inlinable
    init(topic: Topic, sender: Sender?, correlation: EventID?, claim: Claim) {
        self.init(topic: topic, sender: sender, correlation: correlation, sequence: claim.sequence,
                  slot: claim.slot, counted: claim.counted, timestamp: claim.timestamp)
    }

    @inlinable
    init(topic: Topic, sender: Sender?, correlation: EventID?, sequence: UInt64, slot: Unmanaged<TopicSlot>,
         counted: Bool, timestamp: Date?) {
        self.topic = topic
        self.sender = sender
        self.sequence = sequence
        self.correlation = correlation
        self.slot = slot
        self.timestamp = timestamp
        self.counted = counted
    }

    @inlinable
    mutating func envelopeHeader(_ core: BusCore) -> EnvelopeHeader {
        let stamp: Date
        if let timestamp {
            stamp = timestamp
        } else {
            stamp = core.now()
            timestamp = stamp
        }
        return core.makeHeader(topic: topic, sender: sender, sequence: sequence, correlation: correlation,
                               timestamp: stamp)
    }

    @inlinable
    func item<E: Event>(_ event: E) -> MailboxItem<E> { MailboxItem(payload: event, slot: slot, sequence: sequence) }
}

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

    /// The dispatch frame this task opened on this bus, if any.
    @usableFromInline
    func currentFrame() -> DispatchFrame? {
        DispatchFrame.find(for: self)
    }

    /// Runs `body` with a dispatch frame open, then delivers what handlers published meanwhile.
    @usableFromInline
    func inFrame(_ body: () -> Int?) -> Int? {
        openFrames.wrappingAdd(1, ordering: .relaxed)
        defer { openFrames.wrappingSubtract(1, ordering: .relaxed) }
        let frame = DispatchFrame(core: self)
        return DispatchFrame.$current.withValue(frame) {
            let result = body()
            frame.runDeferred()
            return result
        }
    }

    /// The same for an asynchronous delivery.
    @usableFromInline
    func inFrame(_ body: () async -> Void) async {
        openFrames.wrappingAdd(1, ordering: .relaxed)
        defer { openFrames.wrappingSubtract(1, ordering: .relaxed) }
        let frame = DispatchFrame(core: self)
        await DispatchFrame.$current.withValue(frame) {
            await body()
            frame.runDeferred()
        }
    }

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
