import HeraldSync
import Synchronization

/// One event waiting in a mailbox, with what the bus needs to account for it.
@usableFromInline struct MailboxItem<Payload: Sendable>: Sendable {
    @usableFromInline var payload: Payload
    /// The topic's slot. Slots live as long as the bus core, which every mailbox user holds.
    @usableFromInline var slot: Unmanaged<TopicSlot>
    @usableFromInline var sequence: UInt64

    @inlinable
    init(payload: Payload, slot: Unmanaged<TopicSlot>, sequence: UInt64) {
        self.payload = payload
        self.slot = slot
        self.sequence = sequence
    }
}

/// What happened to an offered event.
@usableFromInline enum OfferOutcome: Sendable {
    case accepted
    /// The mailbox is full and the policy is `.wait`: the caller may wait for room.
    case full
    /// The subscription ended; the event was not taken.
    case closed
    /// An event was dropped under the overflow policy: the arriving one (`dropNewest`) or the
    /// oldest waiting one (`dropOldest`), whose topic slot is given. `report` is the number of
    /// drops to report now (0 when a report is already pending).
    /// `accepted` says whether the offered event went in (it did under `dropOldest`).
    case dropped(slot: Unmanaged<TopicSlot>, accepted: Bool, report: Int, total: Int)
}

/// Events handed from the publishers to a mailbox's consumer without the lock.
///
/// `@unchecked Sendable`: one side owns it at a time. A publisher fills it holding the bus lock
/// and publishes it with a releasing store to `Mailbox.handoff`; the consumer (or `close`) takes
/// it with an exchange, and gives it back emptied through `Mailbox.spare` the same way.
@usableFromInline
final class HandoffBatch<Item>: @unchecked Sendable {
    @usableFromInline var items = ContiguousArray<Item>()
    /// The first event of `items` to deliver.
    @usableFromInline var start = 0
    /// The running total of drops when it was handed over (its drops were reported then).
    @usableFromInline var droppedTotal = 0

    @usableFromInline init() {}
}

/// A value guarded by a bus's lock rather than a lock of its own: the mailboxes' state, so that
/// a publish holding the bus lock can append to them without another lock.
@usableFromInline
struct BusLocked<Value> {
    /// Unowned: every user of a mailbox holds its bus core (routes, consumer tasks, streams and
    /// shutdown all reach the mailbox through the core), and the core owns the mailbox through
    /// its records, so a strong reference would be a cycle.
    @usableFromInline unowned(unsafe) let core: BusCore
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    init(_ value: Value, core: BusCore) {
        self.core = core
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    /// Frees the storage; once, from the owner's deinit.
    func destroy() {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the value, holding the bus lock.
    @inlinable
    func withLock<Result>(_ body: (inout Value) -> sending Result) -> sending Result {
        core.state.withLock { _ in body(&storage.pointee) }
    }

    /// Runs `body` with the value if the bus lock is free now; nil, without waiting, if not.
    @inlinable
    func withLockIfAvailable<Result>(_ body: (inout Value) -> sending Result) -> sending Result? {
        core.state.withLockIfAvailable { _ in body(&storage.pointee) }
    }

    /// Runs `body` with the value; the caller holds the bus lock.
    @inlinable
    func withLockHeld<Result>(_ body: (inout Value) -> Result) -> Result {
        body(&storage.pointee)
    }
}

/// What an offer leaves for after the locks: consumers to wake and dropped events to release.
/// Both are rare (a consumer sleeps only on an empty mailbox; `dropOldest` trims once per
/// `capacity` drops), so the usual offer leaves nothing and allocates nothing.
@usableFromInline
struct MailboxWork {
    @usableFromInline var consumers: [UnsafeContinuation<Void, Never>]?
    /// Events taken out of mailboxes, of whatever payload type, released by `run`.
    @usableFromInline var released: [Any]?
    /// Drops of the last offer's mailbox to report, and its running total (a publisher handed
    /// over a batch); taken by the caller, which knows the subscription.
    @usableFromInline var drops: (count: Int, total: Int)?

    @inlinable init() {}

    @inlinable mutating func wake(_ more: [UnsafeContinuation<Void, Never>]) {
        if consumers == nil { consumers = more } else { consumers! += more }
    }

    @inlinable mutating func reportDrops(_ count: Int, total: Int) {
        drops = (count, total)
    }

    @inlinable mutating func release(_ items: some Any) {
        if released == nil { released = [items] } else { released!.append(items) }
    }

    @inlinable var isPending: Bool { consumers != nil || released != nil }

    /// Wakes the consumers and releases the events; outside every lock.
    @inlinable mutating func run() {
        if let consumers {
            self.consumers = nil
            for consumer in consumers { consumer.resume() }
        }
        released = nil
    }
}

/// The type-erased face of a mailbox, for stats and shutdown.
@usableFromInline
protocol MailboxControl: AnyObject, Sendable {
    var snapshot: MailboxSnapshot { get }
    /// The same, for a caller that holds the bus lock.
    var snapshotHoldingLock: MailboxSnapshot { get }
    /// Stop taking events from publishers after the waiting ones are delivered.
    func finish()
    /// End now: discard waiting events (returned count) and wake everyone.
    @discardableResult func close() -> Int
    /// Returns when the consumer has taken every event after `finish()`, or the mailbox closed.
    func waitUntilDrained() async
    /// Returns when there is room (or the mailbox closed, or the task is cancelled).
    func waitForSpace() async
}

@usableFromInline
struct MailboxSnapshot: Sendable {
    var depth: Int
    var highWaterMark: Int
    var dropped: Int
    /// Events discarded undelivered: waiting when the mailbox closed, or arriving after its
    /// consumer finished draining.
    var discarded: Int
}

/// A subscription's bounded queue, drained in order by its consumer: a queued handler's task
/// (a batch at a time) or a stream's iterators (an event at a time).
///
/// A state struct behind the bus's own lock: a publish whose subscribers are all queued appends
/// to their mailboxes while it holds that lock to number the event, so it takes one lock, not
/// one plus one per mailbox (see `BusCore.claimDelivering`). Other publishers take the bus lock
/// to append and wake a sleeping consumer.
///
/// A handler's task takes the whole buffer at once, so it pays per batch rather than per event.
/// Taking it under the bus lock would make it contend with every publisher (one that keeps
/// taking the lock wins almost every time, and the task spins, then sleeps on it), so while
/// publishers keep it busy it takes batches without the lock: it sets `wanted`, and the next
/// publish that finds `handoffThreshold` events waiting moves them into a `HandoffBatch` the
/// task exchanges out of `handoff`. A `dropOldest` mailbox, whose publishers remove waiting
/// events, and streams, which take one event at a time, always take under the lock. Values are
/// never released while the lock is held, so an event's deinit may use the bus.
///
/// `@unchecked Sendable`: the mutable state is `state`'s storage, read and written only while
/// the bus lock is held (`BusLocked`), and handed-off batches, owned by one side at a time
/// through atomics (`HandoffBatch`).
@usableFromInline
final class Mailbox<Payload: Sendable>: MailboxControl, @unchecked Sendable {
    @usableFromInline typealias Item = MailboxItem<Payload>

    @usableFromInline enum Phase { case open, finishing, closed }

    @usableFromInline
    struct State {
        @usableFromInline var buffer = ContiguousArray<Item>()
        /// Items before `head` were taken (by a stream) or dropped (`dropOldest`).
        @usableFromInline var head = 0
        @usableFromInline var phase = Phase.open
        /// Consumers waiting for events (one task, or a stream's iterators).
        @usableFromInline var consumers: [UnsafeContinuation<Void, Never>] = []
        @usableFromInline var producers: [(id: UInt64, continuation: UnsafeContinuation<Void, Never>)] = []
        var nextProducerID: UInt64 = 0
        var drainWaiters: [UnsafeContinuation<Void, Never>] = []
        /// The consumer saw the mailbox finished and empty: later offers are refused.
        @usableFromInline var consumerDone = false
        /// Read by a stream, which takes one event at a time and holds none outside the mailbox.
        var isStream = false
        @usableFromInline var highWaterMark = 0
        @usableFromInline var dropped = 0
        @usableFromInline var discarded = 0
        @usableFromInline var unreportedDrops = 0
        @usableFromInline var reportPending = false
        /// Events in the batch last put in `Mailbox.handoff`; they still wait while it is there.
        @usableFromInline var handedOff = 0

        @usableFromInline init() {}

        @inlinable var depth: Int { buffer.count - head }
        @inlinable var hasProducers: Bool { !producers.isEmpty }

        var isDrained: Bool {
            consumerDone || phase == .closed || (isStream && phase == .finishing && depth == 0)
        }

        @usableFromInline
        mutating func takeConsumers() -> [UnsafeContinuation<Void, Never>] {
            guard !consumers.isEmpty else { return [] }
            defer { consumers = [] }
            return consumers
        }

        mutating func takeProducers() -> [UnsafeContinuation<Void, Never>] {
            guard !producers.isEmpty else { return [] }
            defer { producers.removeAll(keepingCapacity: true) }
            return producers.map(\.continuation)
        }

        mutating func takeDrainWaiters() -> [UnsafeContinuation<Void, Never>] {
            guard !drainWaiters.isEmpty else { return [] }
            defer { drainWaiters.removeAll() }
            return drainWaiters
        }

        /// Counts a drop; returns the outcome, with a report count when no report is pending.
        @usableFromInline
        mutating func recordDrop(of slot: Unmanaged<TopicSlot>, accepted: Bool) -> OfferOutcome {
            dropped += 1
            // Drops of the bus's own events are counted, not reported: reporting them could
            // feed itself.
            guard !slot._withUnsafeGuaranteedRef({ $0.isInternal }) else {
                return .dropped(slot: slot, accepted: accepted, report: 0, total: dropped)
            }
            unreportedDrops += 1
            guard !reportPending else { return .dropped(slot: slot, accepted: accepted, report: 0, total: dropped) }
            reportPending = true
            let report = unreportedDrops
            unreportedDrops = 0
            return .dropped(slot: slot, accepted: accepted, report: report, total: dropped)
        }

        /// Forgets the skipped prefix once it is as long as the capacity; returns it, to be
        /// released after the lock.
        @usableFromInline
        mutating func trimHead(capacity: Int) -> ContiguousArray<Item> {
            guard head >= capacity else { return [] }
            let trimmed = ContiguousArray(buffer[..<head])
            buffer.removeFirst(head)
            head = 0
            return trimmed
        }
    }

    @usableFromInline let capacity: Int
    @usableFromInline let overflow: OverflowPolicy
    // The consumer's few yields after a small batch are kept because herald-bench shows they
    // pay in CPU as well as in rate: batches grow while the consumer gives way, so it sleeps
    // and is woken less. It never polls while yielding; the number is bounded. On the shared
    // 2-core machine (2026-12-01, release, herald side, 4 runs each), async.fanout1 with 16:
    // 6.1-7.0 M events/s at 0.14-0.16 CPU s per million; with none: 3.7-5.6 M/s at
    // 0.18-0.25. The consumer also used to yield twice before sleeping, checking the mailbox
    // under its lock after each: over 11 paired runs that made no difference beyond the
    // noise (async.fanout1 4.3-8.6 M/s with, 4.0-8.5 without; CPU 0.16-0.28 and 0.14-0.27),
    // so that loop is gone. With batches handed over without the lock (2026-12-01, 6 runs
    // each), a small batch of under 256 rather than 64 gave async.fanout1 a median of 26.7
    // against 25.2 M/s and async.fanout10 6.6 against 5.1 M/s, at equal or lower CPU per event;
    // with no yields at all async.fanout1 fell to 11-18 M/s at twice the CPU.
    /// Below this many events a batch is small (see `BusCore.consume`).
    @usableFromInline static var smallBatch: Int { 256 }
    @usableFromInline static var yieldsAfterSmallBatch: Int { 16 }
    /// The state, behind the bus's lock (see the type's comment).
    @usableFromInline let state: BusLocked<State>
    /// A batch handed to the consumer without the lock (a retained `HandoffBatch`), or nil. Set
    /// by a publisher holding the lock, taken by the consumer's exchange (or reclaimed by
    /// `close`): whoever exchanges it out owns it.
    @usableFromInline let handoff = Atomic<UnsafeMutableRawPointer?>(nil)
    /// An emptied batch the consumer gives back, so that the publishers' next buffer keeps its
    /// capacity (retained), or nil.
    @usableFromInline let spare = Atomic<UnsafeMutableRawPointer?>(nil)
    /// The consumer has taken its last batch and would take the next one without the lock.
    @usableFromInline let wanted = Atomic<Bool>(false)
    /// Publishers may be waiting for room: the consumer, having taken a batch without the lock,
    /// wakes them under it.
    @usableFromInline let producersWaiting = Atomic<Bool>(false)
    /// A publish hands the waiting events to a consumer that wants them once there are at least
    /// this many; fewer are left for the consumer to take under the lock, which at such rates
    /// it seldom has to contend for.
    @usableFromInline static var handoffThreshold: Int { 8 }
    /// How many times a consumer that found the lock held gives way before it waits for it.
    @usableFromInline static var handoffPatience: Int { 8 }

    init(capacity: Int, overflow: OverflowPolicy, core: BusCore) {
        self.capacity = capacity
        self.overflow = overflow
        self.state = BusLocked(State(), core: core)
    }

    deinit {
        state.destroy()
        for raw in [handoff.load(ordering: .acquiring), spare.load(ordering: .acquiring)] {
            if let raw { Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).release() }
        }
    }

    /// Events waiting in the handed-off batch, if the consumer has not taken it yet. Under the
    /// bus lock (only the consumer's exchange can change the answer meanwhile, to 0).
    @inlinable
    func pendingHandoff(_ s: inout State) -> Int {
        guard s.handedOff > 0 else { return 0 }
        if handoff.load(ordering: .sequentiallyConsistent) != nil { return s.handedOff }
        s.handedOff = 0
        return 0
    }

    /// Every event waiting: in the buffer, and in a batch handed off but not yet taken.
    @inlinable
    func waiting(_ s: inout State) -> Int { s.depth + pendingHandoff(&s) }

    /// Offers an event. With `.wait`, a full mailbox answers `.full` unless `mayExceed`, in which
    /// case the event goes in beyond the capacity (a synchronous publisher cannot wait).
    /// Drops to report beyond the outcome's (a batch handed over) are left in `work.drops`.
    @inlinable func offer(_ item: Item, mayExceed: Bool, work: inout MailboxWork) -> OfferOutcome {
        let outcome = state.withLock { _ in offerHoldingLock(item, mayExceed: mayExceed, deferring: &work) }
        work.run()
        return outcome
    }

    /// The same, for a caller that holds the bus lock: the consumer's wake-up and the release of
    /// dropped events are left to `work` too, which the caller runs after the lock (a woken task
    /// or an event's deinit may use the bus).
    @inlinable func offerHoldingLock(_ item: Item, mayExceed: Bool, deferring work: inout MailboxWork) -> OfferOutcome {
        // Optionals, so the usual offer (nobody to wake, nothing trimmed) makes no array at all.
        var trimmed: ContiguousArray<Item>?
        let (outcome, consumers) = state.withLockHeld { s -> (OfferOutcome, [UnsafeContinuation<Void, Never>]?) in
            guard s.phase != .closed, !s.consumerDone else {
                s.discarded += 1
                return (.closed, nil)
            }
            var outcome = OfferOutcome.accepted
            // The buffer plus the last batch handed off is an upper bound: only when it reaches
            // the capacity is the handoff looked at.
            if s.depth + s.handedOff >= capacity, waiting(&s) >= capacity {
                switch overflow {
                case .wait:
                    if !mayExceed { return (.full, nil) }
                case .dropNewest:
                    return (s.recordDrop(of: item.slot, accepted: false), nil)
                case .dropOldest:
                    outcome = s.recordDrop(of: s.buffer[s.head].slot, accepted: true)
                    s.head += 1
                    if s.head >= capacity { trimmed = s.trimHead(capacity: capacity) }
                }
            }
            s.buffer.append(item)
            if s.depth + s.handedOff > s.highWaterMark {
                let depth = waiting(&s)
                if depth > s.highWaterMark { s.highWaterMark = depth }
            }
            if s.depth >= Self.handoffThreshold, wanted.load(ordering: .relaxed) { handOff(&s, &work) }
            return (outcome, s.consumers.isEmpty ? nil : s.takeConsumers())
        }
        if let consumers { work.wake(consumers) }
        if let trimmed { work.release(trimmed) }
        return outcome
    }

    /// Moves the waiting events into a batch the consumer takes without the lock. Under the bus
    /// lock, with `wanted` set: the consumer has taken the last batch, so the slot is empty.
    @usableFromInline
    func handOff(_ s: inout State, _ work: inout MailboxWork) {
        guard handoff.load(ordering: .relaxed) == nil else { return }
        let batch: HandoffBatch<Item>
        if let raw = spare.exchange(nil, ordering: .acquiring) {
            batch = Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).takeRetainedValue()
        } else {
            batch = HandoffBatch()
        }
        // The spare's items are empty, with the capacity the buffer needs next.
        swap(&batch.items, &s.buffer)
        batch.start = s.head
        s.head = 0
        // Drops since the last batch are reported now, by the publisher handing over, as a
        // consumer taking a batch would: left to the consumer, they would be reported after the
        // next drops, which a publisher reports at once.
        if s.unreportedDrops > 0 { work.reportDrops(s.unreportedDrops, total: s.dropped) }
        batch.droppedTotal = s.dropped
        s.unreportedDrops = 0
        s.reportPending = false
        s.handedOff = batch.items.count - batch.start
        wanted.store(false, ordering: .relaxed)
        handoff.store(Unmanaged.passRetained(batch).toOpaque(), ordering: .releasing)
    }

    /// The consumer's lock-free take: the handed-off batch, swapped into `items`, if there is one.
    /// The emptied buffer goes back as the spare.
    @inlinable
    func takeHandoff(_ items: inout ContiguousArray<Item>) -> Batch? {
        // Sequentially consistent with `waitForSpace`: either its look at the slot sees it
        // empty, or this load of the flag sees its publisher waiting.
        guard let raw = handoff.exchange(nil, ordering: .sequentiallyConsistent) else { return nil }
        let batch = Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).takeRetainedValue()
        swap(&batch.items, &items)
        let taken = Batch(start: batch.start, dropsToReport: 0, droppedTotal: batch.droppedTotal,
                          wakeProducers: producersWaiting.load(ordering: .sequentiallyConsistent))
        // Emptied here, outside the lock: a released event's deinit may use the bus.
        batch.items.removeAll(keepingCapacity: true)
        if let old = spare.exchange(Unmanaged.passRetained(batch).toOpaque(), ordering: .acquiringAndReleasing) {
            Unmanaged<HandoffBatch<Item>>.fromOpaque(old).release()
        }
        return taken
    }

    /// What a consumer got from ``nextBatch(_:)``.
    @usableFromInline
    struct Batch: Sendable {
        /// The first index of `batch` to deliver.
        @usableFromInline var start: Int
        /// Drops to report now (coalesced since the last report), and the running total.
        @usableFromInline var dropsToReport: Int
        @usableFromInline var droppedTotal: Int
        @usableFromInline var wakeProducers: Bool

        @inlinable
        init(start: Int, dropsToReport: Int, droppedTotal: Int, wakeProducers: Bool) {
            self.start = start
            self.dropsToReport = dropsToReport
            self.droppedTotal = droppedTotal
            self.wakeProducers = wakeProducers
        }
    }

    /// Swaps the waiting events into `batch` (whose old contents are discarded), waiting while
    /// the mailbox is empty. Returns nil when the mailbox is finished and empty, or closed.
    ///
    /// While publishers keep it busy, the consumer takes its batches without the lock: it says it
    /// wants the next one, and a publish holding the lock hands over what waits (see `handOff`).
    /// Otherwise it takes them under the lock. A `dropOldest` mailbox always does, since its
    /// publishers remove the oldest waiting event.
    @inlinable
    func nextBatch(_ batch: inout ContiguousArray<Item>) async -> Batch? {
        batch.removeAll(keepingCapacity: true)
        let handsOff = overflow != .dropOldest
        while true {
            if handsOff, let taken = takeHandoff(&batch) {
                wanted.store(true, ordering: .relaxed)
                if taken.wakeProducers { wakeProducers() }
                return taken
            }
            func take(_ s: inout State) -> sending Batch? {
                if handsOff, let taken = takeHandoff(&batch) { return taken }
                guard s.depth > 0 else { return nil }
                swap(&s.buffer, &batch)
                let start = s.head
                s.head = 0
                let report = s.unreportedDrops
                s.unreportedDrops = 0
                s.reportPending = false
                return Batch(start: start, dropsToReport: report, droppedTotal: s.dropped,
                             wakeProducers: s.hasProducers)
            }
            // A held lock means a busy publisher, which hands the next batch over: rather than
            // wait for the lock (a publisher that keeps taking it wins almost every time, and the
            // consumer spins, then sleeps on it), give way a few times and look for the handoff.
            var attempt: Batch?? = nil
            if handsOff {
                for _ in 0..<Self.handoffPatience {
                    if let locked = state.withLockIfAvailable(take) {
                        attempt = .some(locked)
                        break
                    }
                    await Task.yield()
                    if let taken = takeHandoff(&batch) {
                        attempt = .some(taken)
                        break
                    }
                }
            }
            let taken = attempt ?? state.withLock(take)
            if let taken {
                if handsOff { wanted.store(true, ordering: .relaxed) }
                if taken.wakeProducers { wakeProducers() }
                return taken
            }
            guard await waitForEvents() else { return nil }
        }
    }

    /// One event for a stream's iterator, and the drops to report; waits while the mailbox is
    /// empty. Nil when the mailbox is finished and empty, or closed. Taking one at a time means
    /// an iterator that stops early leaves every other event in the mailbox.
    func next() async -> (Item, dropsToReport: Int, droppedTotal: Int)? {
        while true {
            // The events handed out stay in the buffer until it is spent; it is released after
            // the lock, since one may hold the last reference to an event.
            var spent = ContiguousArray<Item>()
            let taken = state.withLock { s -> (Item, Int, Int, [UnsafeContinuation<Void, Never>])? in
                guard s.depth > 0 else { return nil }
                let item = s.buffer[s.head]
                s.head += 1
                if s.head == s.buffer.count {
                    spent.reserveCapacity(s.buffer.capacity)
                    swap(&spent, &s.buffer)
                    s.head = 0
                }
                let report = s.unreportedDrops
                s.unreportedDrops = 0
                s.reportPending = false
                var wake = s.takeProducers()
                if s.isDrained { wake += s.takeDrainWaiters() }
                return (item, report, s.dropped, wake)
            }
            if let (item, report, total, wake) = taken {
                for continuation in wake { continuation.resume() }
                return (item, report, total)
            }
            guard await waitForEvents() else { return nil }
        }
    }

    /// Wakes publishers waiting for room.
    @usableFromInline
    func wakeProducers() {
        let producers = state.withLock { s in
            producersWaiting.store(false, ordering: .sequentiallyConsistent)
            return s.takeProducers()
        }
        for continuation in producers { continuation.resume() }
    }

    /// The consumer's slow path: waits until events arrive (true) or the mailbox is finished and
    /// empty, or closed (false, and the drain is reported done).
    @usableFromInline
    func waitForEvents() async -> Bool {
        let finished = state.withLock { s -> [UnsafeContinuation<Void, Never>]? in
            guard waiting(&s) == 0, s.phase != .open else { return nil }
            s.consumerDone = true
            return s.takeDrainWaiters() + s.takeProducers()
        }
        if let finished {
            for continuation in finished { continuation.resume() }
            return false
        }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = state.withLock { s in
                if waiting(&s) > 0 || s.phase != .open { return true }
                s.consumers.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        return true
    }

    /// Counts events the consumer had taken but will not deliver (its subscription ended).
    @usableFromInline func abandon(_ count: Int) {
        state.withLock { $0.discarded += count }
    }

    /// Marks the mailbox as read by a stream's iterators.
    func markAsStream() {
        state.withLock { $0.isStream = true }
    }

    @usableFromInline var snapshot: MailboxSnapshot {
        state.withLock { snapshot(of: &$0) }
    }

    @usableFromInline var snapshotHoldingLock: MailboxSnapshot {
        state.withLockHeld { snapshot(of: &$0) }
    }

    func snapshot(of s: inout State) -> MailboxSnapshot {
        MailboxSnapshot(depth: s.phase == .closed ? 0 : waiting(&s), highWaterMark: s.highWaterMark,
                        dropped: s.dropped, discarded: s.discarded)
    }

    @usableFromInline func finish() {
        let wake = state.withLock { s -> [UnsafeContinuation<Void, Never>] in
            if s.phase == .open { s.phase = .finishing }
            var wake = s.takeConsumers()
            if s.isDrained { wake += s.takeDrainWaiters() }
            return wake
        }
        for continuation in wake { continuation.resume() }
    }

    @usableFromInline @discardableResult
    func close() -> Int {
        var released = ContiguousArray<Item>()
        var reclaimed: HandoffBatch<Item>?
        let (discarded, wake) = state.withLock { s -> (Int, [UnsafeContinuation<Void, Never>]) in
            guard s.phase != .closed else { return (0, []) }
            s.phase = .closed
            var discarded = s.depth
            // A batch handed off but not taken is waiting too: whoever exchanges it out owns it.
            if let raw = handoff.exchange(nil, ordering: .sequentiallyConsistent) {
                let batch = Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).takeRetainedValue()
                discarded += batch.items.count - batch.start
                reclaimed = batch
            }
            s.handedOff = 0
            s.discarded += discarded
            swap(&released, &s.buffer)
            s.head = 0
            return (discarded, s.takeProducers() + s.takeDrainWaiters() + s.takeConsumers())
        }
        for continuation in wake { continuation.resume() }
        released.removeAll()
        withExtendedLifetime(reclaimed) {}  // its events are released here, after the lock
        return discarded
    }

    @usableFromInline func waitUntilDrained() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let done = state.withLock { s in
                if s.isDrained { return true }
                s.drainWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    @usableFromInline func waitForSpace() async {
        let id = state.withLock { s in
            s.nextProducerID &+= 1
            return s.nextProducerID
        }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let ready = state.withLock { s in
                    // Checked under the lock: a cancellation that ran before we registered set
                    // the flag first, so we never wait unseen.
                    // Sequentially consistent with `takeHandoff`: either the look at the handoff
                    // in `waiting` sees it taken, or the consumer sees this flag.
                    producersWaiting.store(true, ordering: .sequentiallyConsistent)
                    if waiting(&s) < capacity || s.phase == .closed || s.consumerDone || Task.isCancelled { return true }
                    s.producers.append((id, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { s -> UnsafeContinuation<Void, Never>? in
                guard let index = s.producers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.producers.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }
}
