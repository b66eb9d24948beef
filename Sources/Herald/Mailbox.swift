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

    @inlinable init() {}

    @inlinable mutating func wake(_ more: [UnsafeContinuation<Void, Never>]) {
        if consumers == nil { consumers = more } else { consumers! += more }
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
/// to append and wake a sleeping consumer; a handler's task swaps the whole buffer out under
/// it, so it pays one lock per batch rather than per event. Values are never released while the
/// lock is held, so an event's deinit may use the bus.
///
/// `@unchecked Sendable`: the only mutable state is `state`'s storage, read and written only
/// while the bus lock is held (`BusLocked`).
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
    // so that loop is gone.
    /// Below this many events a batch is small (see `BusCore.consume`).
    @usableFromInline static var smallBatch: Int { 64 }
    @usableFromInline static var yieldsAfterSmallBatch: Int { 16 }
    /// The state, behind the bus's lock (see the type's comment).
    @usableFromInline let state: BusLocked<State>

    init(capacity: Int, overflow: OverflowPolicy, core: BusCore) {
        self.capacity = capacity
        self.overflow = overflow
        self.state = BusLocked(State(), core: core)
    }

    deinit {
        state.destroy()
    }

    /// Offers an event. With `.wait`, a full mailbox answers `.full` unless `mayExceed`, in which
    /// case the event goes in beyond the capacity (a synchronous publisher cannot wait).
    @inlinable func offer(_ item: Item, mayExceed: Bool) -> OfferOutcome {
        var work = MailboxWork()
        let outcome = state.withLock { _ in offerHoldingLock(item, mayExceed: mayExceed, deferring: &work) }
        work.run()
        return outcome
    }

    /// The same, for a caller that holds the bus lock: the consumer's wake-up and the release of
    /// dropped events are left to `work`, which the caller runs after the lock (a woken task or
    /// an event's deinit may use the bus).
    @inlinable func offerHoldingLock(_ item: Item, mayExceed: Bool, deferring work: inout MailboxWork) -> OfferOutcome {
        // Optionals, so the usual offer (nobody to wake, nothing trimmed) makes no array at all.
        var trimmed: ContiguousArray<Item>?
        let (outcome, consumers) = state.withLockHeld { s -> (OfferOutcome, [UnsafeContinuation<Void, Never>]?) in
            guard s.phase != .closed, !s.consumerDone else {
                s.discarded += 1
                return (.closed, nil)
            }
            var outcome = OfferOutcome.accepted
            if s.depth >= capacity {
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
            let depth = s.depth
            if depth > s.highWaterMark { s.highWaterMark = depth }
            return (outcome, s.consumers.isEmpty ? nil : s.takeConsumers())
        }
        if let consumers { work.wake(consumers) }
        if let trimmed { work.release(trimmed) }
        return outcome
    }

    /// What a consumer got from ``nextBatch(_:)``.
    @usableFromInline
    struct Batch {
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
    @inlinable
    func nextBatch(_ batch: inout ContiguousArray<Item>) async -> Batch? {
        batch.removeAll(keepingCapacity: true)
        while true {
            let taken = state.withLock { s -> Batch? in
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
            if let taken {
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
            let taken = state.withLock { s -> (Item, Int, Int, [UnsafeContinuation<Void, Never>])? in
                guard s.depth > 0 else { return nil }
                let item = s.buffer[s.head]
                s.head += 1
                if s.head == s.buffer.count {
                    s.buffer.removeAll(keepingCapacity: true)
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
        let producers = state.withLock { $0.takeProducers() }
        for continuation in producers { continuation.resume() }
    }

    /// The consumer's slow path: waits until events arrive (true) or the mailbox is finished and
    /// empty, or closed (false, and the drain is reported done).
    @usableFromInline
    func waitForEvents() async -> Bool {
        let finished = state.withLock { s -> [UnsafeContinuation<Void, Never>]? in
            guard s.depth == 0, s.phase != .open else { return nil }
            s.consumerDone = true
            return s.takeDrainWaiters() + s.takeProducers()
        }
        if let finished {
            for continuation in finished { continuation.resume() }
            return false
        }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = state.withLock { s in
                if s.depth > 0 || s.phase != .open { return true }
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
        state.withLock { Self.snapshot(of: $0) }
    }

    @usableFromInline var snapshotHoldingLock: MailboxSnapshot {
        state.withLockHeld { Self.snapshot(of: $0) }
    }

    static func snapshot(of s: State) -> MailboxSnapshot {
        MailboxSnapshot(depth: s.phase == .closed ? 0 : s.depth, highWaterMark: s.highWaterMark,
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
        let (discarded, wake) = state.withLock { s -> (Int, [UnsafeContinuation<Void, Never>]) in
            guard s.phase != .closed else { return (0, []) }
            s.phase = .closed
            let discarded = s.depth
            s.discarded += discarded
            swap(&released, &s.buffer)
            s.head = 0
            return (discarded, s.takeProducers() + s.takeDrainWaiters() + s.takeConsumers())
        }
        for continuation in wake { continuation.resume() }
        released.removeAll()
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
                    if s.depth < capacity || s.phase == .closed || s.consumerDone || Task.isCancelled { return true }
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
