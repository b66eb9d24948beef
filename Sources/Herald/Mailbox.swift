import HeraldSync
import Synchronization

/// A subscription's bounded queue, drained in order by its consumer: a queued handler's task
/// (a batch at a time) or a stream's iterators (an event at a time).
///
/// A ``MailboxMachine`` behind the bus's own lock decides; the mailbox holds the lock, carries
/// out what the machine returns after it (resumes continuations, releases events), and owns the
/// atomics of the handoff. A publish whose subscribers are all queued appends to their
/// mailboxes while it holds that lock to number the event, so it takes one lock, not one plus
/// one per mailbox (see `BusCore.claimDelivering`). Other publishers take the bus lock to
/// append and wake a sleeping consumer.
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
    @usableFromInline typealias Machine = MailboxMachine<Payload>
    /// What a consumer got from ``nextBatch(_:)``.
    @usableFromInline typealias Batch = Machine.Batch

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
    /// The machine, behind the bus's lock (see the type's comment).
    @usableFromInline let state: BusLocked<Machine>
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
    /// How many times a consumer that found the lock held gives way before it waits for it.
    @usableFromInline static var handoffPatience: Int { 8 }

    init(capacity: Int, overflow: OverflowPolicy, core: BusCore) {
        self.capacity = capacity
        self.overflow = overflow
        self.state = BusLocked(Machine(capacity: capacity, overflow: overflow), core: core)
    }

    deinit {
        state.destroy()
        for raw in [handoff.load(ordering: .acquiring), spare.load(ordering: .acquiring)] {
            if let raw { Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).release() }
        }
    }

    /// Whether the batch last handed off still waits in the slot. Under the bus lock (only the
    /// consumer's exchange can change the answer meanwhile, to false).
    @inlinable @inline(__always)
    func handoffPending() -> Bool {
        handoff.load(ordering: .sequentiallyConsistent) != nil
    }

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
        state.withLockHeld { s in
            let (outcome, mayHandOff) = s.offer(item, mayExceed: mayExceed, handoffPending: { self.handoffPending() },
                                                work: &work)
            if mayHandOff, wanted.load(ordering: .relaxed) { handOff(&s, &work) }
            return outcome
        }
    }

    /// Moves the waiting events into a batch the consumer takes without the lock. Under the bus
    /// lock, with `wanted` set: the consumer has taken the last batch, so the slot is empty.
    @usableFromInline
    func handOff(_ s: inout Machine, _ work: inout MailboxWork) {
        guard handoff.load(ordering: .relaxed) == nil else { return }
        let batch: HandoffBatch<Item>
        if let raw = spare.exchange(nil, ordering: .acquiring) {
            batch = Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).takeRetainedValue()
        } else {
            batch = HandoffBatch()
        }
        // The spare's items are empty, with the capacity the buffer needs next.
        let handed = s.handOff(into: &batch.items)
        batch.start = handed.start
        batch.droppedTotal = handed.droppedTotal
        if handed.dropsToReport > 0 { work.reportDrops(handed.dropsToReport, total: handed.droppedTotal) }
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
            func take(_ s: inout Machine) -> sending Batch? {
                if handsOff, let taken = takeHandoff(&batch) { return taken }
                return s.takeBatch(into: &batch)
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
            // Released after the lock (see `MailboxMachine.takeOne(spent:)`).
            var spent = ContiguousArray<Item>()
            if let (item, report, total, wake) = state.withLock({ $0.takeOne(spent: &spent) }) {
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
        if case .end(let resume) = state.withLock({ $0.consumerFoundNothing(handoffPending: { self.handoffPending() }) }) {
            for continuation in resume { continuation.resume() }
            return false
        }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let action = state.withLock { $0.consumerWaits(continuation, handoffPending: { self.handoffPending() }) }
            if case .resume(let continuation) = action { continuation.resume() }
        }
        return true
    }

    /// Counts events the consumer had taken but will not deliver (its subscription ended).
    @usableFromInline func abandon(_ count: Int) {
        state.withLock { $0.abandon(count) }
    }

    /// Marks the mailbox as read by a stream's iterators.
    func markAsStream() {
        state.withLock { $0.readByStream() }
    }

    @usableFromInline var snapshot: MailboxSnapshot {
        state.withLock { $0.snapshot(handoffPending: { self.handoffPending() }) }
    }

    @usableFromInline var snapshotHoldingLock: MailboxSnapshot {
        state.withLockHeld { $0.snapshot(handoffPending: { self.handoffPending() }) }
    }

    @usableFromInline func finish() {
        let wake = state.withLock { $0.finish() }
        for continuation in wake { continuation.resume() }
    }

    @usableFromInline @discardableResult
    func close() -> Int {
        var reclaimed: HandoffBatch<Item>?
        let action = state.withLock { s in
            s.close {
                // A batch handed off but not taken is waiting too: whoever exchanges it out owns it.
                guard let raw = handoff.exchange(nil, ordering: .sequentiallyConsistent) else { return 0 }
                let batch = Unmanaged<HandoffBatch<Item>>.fromOpaque(raw).takeRetainedValue()
                reclaimed = batch
                return batch.items.count - batch.start
            }
        }
        guard var action else { return 0 }
        for continuation in action.resume { continuation.resume() }
        action.released.removeAll()
        withExtendedLifetime(reclaimed) {}  // its events are released here, after the lock
        return action.discarded
    }

    @usableFromInline func waitUntilDrained() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            if case .resume(let continuation) = state.withLock({ $0.waitForDrain(continuation) }) {
                continuation.resume()
            }
        }
    }

    @usableFromInline func waitForSpace() async {
        let id = state.withLock { $0.makeProducerID() }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let action = state.withLock { s in
                    // Sequentially consistent with `takeHandoff`: either the look at the handoff
                    // in `waiting` sees it taken, or the consumer sees this flag.
                    producersWaiting.store(true, ordering: .sequentiallyConsistent)
                    // Checked under the lock: a cancellation that ran before we registered set
                    // the flag first, so we never wait unseen.
                    return s.producerWaits(id: id, continuation, isCancelled: Task.isCancelled,
                                           handoffPending: { self.handoffPending() })
                }
                if case .resume(let continuation) = action { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.cancelProducer(id) }?.resume()
        }
    }
}
