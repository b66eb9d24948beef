#if canImport(FoundationEssentials)
import HeraldSync
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// An event kept for late subscribers.
struct RetainedEvent: Sendable {
    let envelope: Envelope<any Event>
    let eventType: ObjectIdentifier
    let expires: Date?
}

/// The bus's shared state, behind one lock, which also guards every mailbox's state. Publishing
/// takes the lock once, briefly, to number the event and fetch its route, and, when every
/// subscriber on the route is queued, to append it to their mailboxes; handlers always run
/// outside it.
@usableFromInline
struct BusState {
    enum Phase { case running, draining, stopped }

    var phase = Phase.running
    var sequence: UInt64 = 0
    /// Publishes accepted while running (the bus's reports while draining are not counted).
    var accepted: UInt64 = 0
    /// Bumped on every subscribe and cancel; cached routes of older generations are rebuilt.
    var generation: UInt64 = 0
    var nextSubscriptionID: UInt64 = 0
    var trie = PatternTrie<SubscriberRecord>()
    /// Type subscriptions without a pattern, by event type.
    var typed: [ObjectIdentifier: [SubscriberRecord]] = [:]
    var records: [UInt64: SubscriberRecord] = [:]
    /// Every topic slot this bus has made; they live as long as the bus.
    var slots: [TopicSlot] = []
    /// The same slots, unretained, by the topic's intern index, for a lookup without reference
    /// counting on the publish path.
    var slotIndex = ContiguousArray<Unmanaged<TopicSlot>?>()
    var retained: [Int32: RetainedEvent] = [:]
    /// Routes dropped from the caches while a counted publish may still be walking one (counted
    /// publishes hold their route unretained). Released, after the lock, once no counted
    /// publish is in flight: by the publish that finishes last, or by the cancel that retired
    /// them when none was in flight.
    var retiredRoutes: [Route] = []

    /// The topic's slot, made on first use. The lookup is inlined into every publish's claim;
    /// making a slot is not.
    @inline(__always)
    mutating func slot(for topic: Topic) -> Unmanaged<TopicSlot> {
        let index = Int(topic.index)
        if index < slotIndex.count, let slot = slotIndex[index] { return slot }
        return makeSlot(for: topic)
    }

    @inline(never)
    private mutating func makeSlot(for topic: Topic) -> Unmanaged<TopicSlot> {
        let index = Int(topic.index)
        if index >= slotIndex.count {
            slotIndex.append(contentsOf: repeatElement(nil, count: index - slotIndex.count + 1))
        }
        let slot = TopicSlot(topic: topic)
        slots.append(slot)
        slotIndex[index] = Unmanaged.passUnretained(slot)
        return Unmanaged.passUnretained(slot)
    }

    /// The route of events of `type` on `slot`'s topic, from the cache or rebuilt from the
    /// indexes. Unretained: the cache keeps it, and once dropped from there `retiredRoutes` does.
    @inline(__always)
    mutating func route(_ slot: TopicSlot, eventType type: ObjectIdentifier) -> Unmanaged<Route> {
        if slot.primaryType == type, slot.primaryGeneration == generation { return .passUnretained(slot.primaryRoute) }
        return rebuiltRoute(slot, eventType: type)
    }

    @inline(never)
    private mutating func rebuiltRoute(_ slot: TopicSlot, eventType type: ObjectIdentifier) -> Unmanaged<Route> {
        let route = cachedRoute(slot, eventType: type)
        if slot.primaryType == nil || slot.primaryType == type {
            slot.primaryType = type
            slot.primaryGeneration = generation
            slot.primaryRoute = route
        }
        return .passUnretained(route)
    }

    private mutating func cachedRoute(_ slot: TopicSlot, eventType type: ObjectIdentifier) -> Route {
        for (offset, cached) in slot.routes.enumerated() where cached.eventType == type {
            if cached.generation == generation { return cached.route }
            retiredRoutes.append(cached.route)
            let route = buildRoute(slot, eventType: type)
            slot.routes[offset] = .init(eventType: type, generation: generation, route: route)
            return route
        }
        let route = buildRoute(slot, eventType: type)
        slot.routes.append(.init(eventType: type, generation: generation, route: route))
        return route
    }

    private func buildRoute(_ slot: TopicSlot, eventType type: ObjectIdentifier) -> Route {
        var matched: [SubscriberRecord] = []
        trie.match(slot.tokens, into: &matched)
        matched.removeAll { !$0.accepts(eventType: type) }
        matched.append(contentsOf: typed[type] ?? [])
        if matched.isEmpty { return .empty }
        matched.sort { $0.id < $1.id }
        return Route(ContiguousArray(matched))
    }

    mutating func register(_ record: SubscriberRecord) {
        if let tokens = record.patternTokens {
            trie.insert(record, tokens: tokens)
        } else if let type = record.eventType {
            typed[type, default: []].append(record)
        }
        records[record.id] = record
        generation &+= 1
    }

    mutating func unregister(id: UInt64) -> SubscriberRecord? {
        guard let record = records.removeValue(forKey: id) else { return nil }
        if let tokens = record.patternTokens {
            trie.remove(tokens: tokens) { $0.id == id }
        } else if let type = record.eventType {
            typed[type]?.removeAll { $0.id == id }
            if typed[type]?.isEmpty == true { typed[type] = nil }
        }
        generation &+= 1
        // Cached routes would keep the record, and what its handler captures, alive until the
        // topic is next published; forget them now.
        for slot in slots where slot.primaryType != nil {
            // The primary route is one of `routes`.
            retiredRoutes.append(contentsOf: slot.routes.lazy.map(\.route))
            slot.routes.removeAll()
            slot.primaryType = nil
            slot.primaryRoute = .empty
        }
        return record
    }

    /// Retained events a new subscription should see, numbered after `sequence`, oldest first;
    /// forgets expired ones.
    mutating func retainedEvents(for record: SubscriberRecord, now: Date, after sequence: UInt64) -> [RetainedEvent] {
        guard !retained.isEmpty else { return [] }
        var result: [RetainedEvent] = []
        for (key, entry) in retained where entry.envelope.sequence > sequence {
            if let expires = entry.expires, expires <= now {
                retained[key] = nil
                continue
            }
            guard record.accepts(eventType: entry.eventType) else { continue }
            if let sender = record.sender, sender != entry.envelope.sender { continue }
            if let pattern = record.pattern, !pattern.matches(entry.envelope.topic) { continue }
            result.append(entry)
        }
        return result.sorted { $0.envelope.sequence < $1.envelope.sequence }
    }

    /// Retained events with their topic slots, to replay.
    mutating func slotted(_ events: [RetainedEvent]) -> [(RetainedEvent, Unmanaged<TopicSlot>)] {
        events.map { ($0, slot(for: $0.envelope.topic)) }
    }
}

/// The bus's machinery. ``EventBus`` is its public face; subscriptions and consumer tasks hold
/// the core, so it outlives the last of them.
@usableFromInline final class BusCore: Sendable {
    @usableFromInline let id = UUID()
    @usableFromInline let configuration: EventBus.Configuration
    /// Also guards every mailbox's state (`BusLocked`).
    @usableFromInline let state: SyncLock<BusState>
    /// How many dispatch frames are open on this bus, so a publish outside any frame skips the
    /// task-local lookup.
    @usableFromInline let openFrames = Atomic<Int>(0)
    /// Counted publishes (accepted while running) that have finished delivering. Shutdown waits
    /// until this reaches the count accepted when the doors closed.
    @usableFromInline let finishedPublishes = Atomic<UInt64>(0)
    /// The count shutdown waits for; `.max` until shutdown begins.
    let drainTarget = Atomic<UInt64>(.max)
    /// Shutdown's wait for in-flight publishes, resumed by the last of them (or by shutdown
    /// itself when none was in flight, or by its deadline).
    let drainWaiter = SyncLock<UnsafeContinuation<Void, Never>?>(nil)
    /// The sequence number before the first event: the count of publishes starts from it.
    let sequenceBase: UInt64
    /// Set for good once a queued subscription takes envelopes: publishes then take their
    /// timestamp before the lock, so that the clock is never called under it.
    @usableFromInline let queuedEnvelopes = Atomic<Bool>(false)
    /// Set while `BusState.retiredRoutes` may hold routes, so that a finishing publish looks.
    @usableFromInline let retiredRoutesPending = Atomic<Bool>(false)

    init(configuration: EventBus.Configuration) {
        self.configuration = configuration
        sequenceBase = max(configuration.firstSequence, 1) - 1
        var state = BusState()
        state.sequence = sequenceBase
        self.state = SyncLock(state)
    }

    /// Counts a finished publish; the one that completes shutdown's count wakes it.
    @usableFromInline func publishFinished() {
        let finished = finishedPublishes.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        // Sequentially consistent with `waitForAcceptedPublishes`: either this load sees the
        // target, or that function's load of `finishedPublishes` sees this publish.
        if finished >= drainTarget.load(ordering: .sequentiallyConsistent) { resumeDrainWaiter() }
        // Sequentially consistent with the store in `cancel`: either this load sees it, or that
        // cancel's check sees this publish finished.
        if retiredRoutesPending.load(ordering: .sequentiallyConsistent) { releaseRetiredRoutes() }
    }

    /// Releases the retired routes if no counted publish is in flight (accepted ones have all
    /// finished, and none can start while the lock is held).
    @usableFromInline func releaseRetiredRoutes() {
        let released = state.withLock { s -> [Route] in
            guard finishedPublishes.load(ordering: .sequentiallyConsistent) == s.accepted else { return [] }
            retiredRoutesPending.store(false, ordering: .sequentiallyConsistent)
            defer { s.retiredRoutes = [] }
            return s.retiredRoutes
        }
        // After the lock: a route may hold the last reference to a cancelled subscription, whose
        // handler may capture something whose deinit uses the bus.
        _ = released
    }

    func resumeDrainWaiter() {
        let waiter = drainWaiter.withLock { waiter -> UnsafeContinuation<Void, Never>? in
            defer { waiter = nil }
            return waiter
        }
        waiter?.resume()
    }

    /// Waits until `target` counted publishes have finished, or the task is cancelled. No
    /// polling: the last publish to finish resumes it.
    func waitForAcceptedPublishes(_ target: UInt64) async {
        drainTarget.store(target, ordering: .sequentiallyConsistent)
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                drainWaiter.withLock { $0 = continuation }
                if finishedPublishes.load(ordering: .sequentiallyConsistent) >= target || Task.isCancelled {
                    resumeDrainWaiter()
                }
            }
        } onCancel: {
            resumeDrainWaiter()
        }
    }

    /// How many of the publishes shutdown waits for have not finished (0 before shutdown
    /// begins): what stands between a draining bus and its mailboxes' finish.
    var publishesShutdownAwaits: UInt64 {
        let target = drainTarget.load(ordering: .sequentiallyConsistent)
        guard target != .max else { return 0 }
        let finished = finishedPublishes.load(ordering: .sequentiallyConsistent)
        return target > finished ? target - finished : 0
    }

    @usableFromInline func now() -> Date { configuration.clock() }

    @usableFromInline func eventID(_ sequence: UInt64) -> EventID { EventID(bus: id, sequence: sequence) }

    /// Ends a subscription: no handler call starts after this returns; waiting events are discarded.
    func cancel(id: UInt64) {
        let record = state.withLock { s -> SubscriberRecord? in
            let record = s.unregister(id: id)
            if !s.retiredRoutes.isEmpty { retiredRoutesPending.store(true, ordering: .sequentiallyConsistent) }
            return record
        }
        releaseRetiredRoutes()
        guard let record else { return }
        record.active.store(false, ordering: .relaxed)
        record.mailbox?.close()
    }

    /// Stops routing events to `id`, lets its mailbox's consumer deliver what waits there, then
    /// ends it as ``cancel(id:)`` does.
    func retire(id: UInt64) async {
        let record = state.withLock { s -> SubscriberRecord? in
            let record = s.unregister(id: id)
            if !s.retiredRoutes.isEmpty { retiredRoutesPending.store(true, ordering: .sequentiallyConsistent) }
            return record
        }
        releaseRetiredRoutes()
        guard let record else { return }
        if let mailbox = record.mailbox {
            mailbox.finish()
            await mailbox.waitUntilDrained()
        }
        record.active.store(false, ordering: .relaxed)
        record.mailbox?.close()
    }

    /// Counts a handler failure and publishes `bus.subscriber.failed`, unless the failing event
    /// was itself a failure report.
    @usableFromInline func reportFailure(_ record: SubscriberRecord, slot: Unmanaged<TopicSlot>, sequence: UInt64, error: any Error) {
        record.failed.wrappingAdd(1, ordering: .relaxed)
        let topic = slot.takeUnretainedValue().topic
        slot.takeUnretainedValue().failed.wrappingAdd(1, ordering: .relaxed)
        // A failure on one of the bus's own reports is counted, not reported: reporting it
        // could feed itself (a drop report that fails, whose failure report is dropped, …).
        guard !slot.takeUnretainedValue().isInternal else { return }
        let report = SubscriberFailed(subscription: record.name, subscriptionID: record.id,
                                      eventTopic: topic, eventSequence: sequence, error: "\(error)")
        _ = try? post(report, sender: nil, correlation: nil, retention: .none, isInternal: true)
    }

    /// Publishes `bus.dropped` for each subscription's drops a publish collected.
    @usableFromInline func reportDrops(_ drops: [(SubscriberRecord, Int, Int)]) {
        for (record, count, total) in drops { reportDrops(record, count: count, total: total) }
    }

    /// Publishes `bus.dropped` for a subscription's drops.
    @usableFromInline func reportDrops(_ record: SubscriberRecord, count: Int, total: Int) {
        guard count > 0 else { return }
        let policy: OverflowPolicy
        if case .queued(_, let overflow) = record.delivery.mode { policy = overflow } else { policy = .wait }
        let report = EventsDropped(subscription: record.name, subscriptionID: record.id,
                                   policy: policy, count: count, total: total)
        _ = try? post(report, sender: nil, correlation: nil, retention: .none, isInternal: true)
    }

    /// Ends everything at once (the bus object went away): discards waiting events.
    func terminate() {
        let records = state.withLock { s -> [SubscriberRecord] in
            s.phase = .stopped
            return Array(s.records.values)
        }
        for record in records {
            record.mailbox?.close()
        }
    }
}
