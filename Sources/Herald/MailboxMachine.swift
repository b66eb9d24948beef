/// The decisions of one mailbox, apart from the lock and the atomics: what an offer does on a
/// full buffer, when the consumer gets a batch or ends, who waits and who is woken, what a
/// close discards. Every method runs under the bus lock (see ``Mailbox``) and returns what the
/// mailbox must do after it, outside the lock: continuations to resume and events to release
/// (a woken task or an event's deinit may use the bus).
///
/// The handoff of batches without the lock lives in ``Mailbox`` (it is atomics); the machine
/// only counts the events of the last batch handed off, and asks `handoffPending` (whether the
/// consumer has yet to take that batch) when the count matters.
@usableFromInline
struct MailboxMachine<Payload: Sendable> {
    @usableFromInline typealias Item = MailboxItem<Payload>
    @usableFromInline typealias Continuation = UnsafeContinuation<Void, Never>

    /// Where the mailbox is in its life.
    @usableFromInline
    enum Phase: Equatable {
        /// Taking events.
        case open
        /// Taking events until its consumer has taken every waiting one (``finish()``).
        case finishing
        /// The consumer found it finishing and empty, and ended: later offers are refused.
        case drained
        /// Ended at once (``close(reclaimHandoff:)``): waiting events were discarded.
        case closed
    }

    @usableFromInline let capacity: Int
    @usableFromInline let overflow: OverflowPolicy
    @usableFromInline var phase = Phase.open
    @usableFromInline var buffer = ContiguousArray<Item>()
    /// Items before `head` were taken (by a stream) or dropped (`dropOldest`).
    @usableFromInline var head = 0
    /// Consumers waiting for events (one task, or a stream's iterators).
    @usableFromInline var consumers: [Continuation] = []
    /// Publishers waiting for room, by the id ``makeProducerID()`` gave them.
    @usableFromInline var producers: [(id: UInt64, continuation: Continuation)] = []
    @usableFromInline var nextProducerID: UInt64 = 0
    @usableFromInline var drainWaiters: [Continuation] = []
    /// Read by a stream, which takes one event at a time and holds none outside the mailbox.
    @usableFromInline var isStream = false
    @usableFromInline var highWaterMark = 0
    @usableFromInline var dropped = 0
    @usableFromInline var discarded = 0
    @usableFromInline var unreportedDrops = 0
    @usableFromInline var reportPending = false
    /// Events in the batch last handed off; they still wait while the consumer has not taken it.
    @usableFromInline var handedOff = 0

    /// An offer hands the waiting events to a consumer that wants them once there are at least
    /// this many; fewer are left for the consumer to take under the lock, which at such rates
    /// it seldom has to contend for.
    @usableFromInline static var handoffThreshold: Int { 8 }

    @usableFromInline
    init(capacity: Int, overflow: OverflowPolicy) {
        self.capacity = capacity
        self.overflow = overflow
    }

    // MARK: - Looking

    @inlinable var depth: Int { buffer.count - head }
    @inlinable var hasProducers: Bool { !producers.isEmpty }
    @inlinable var isRefusing: Bool { phase == .drained || phase == .closed }

    /// Whoever waits for the drain may go on: the consumer ended, the mailbox closed, or a
    /// stream's mailbox is finishing and empty (a stream holds no events outside it).
    @usableFromInline var isDrained: Bool {
        switch phase {
        case .drained, .closed: true
        case .finishing: isStream && depth == 0
        case .open: false
        }
    }

    /// Every event waiting: in the buffer, and in the batch last handed off if
    /// `handoffPending()` says the consumer has not taken it (asked only when there is one; once
    /// taken, it is forgotten).
    @inlinable @inline(__always)
    mutating func waiting(handoffPending: () -> Bool) -> Int {
        guard handedOff > 0 else { return depth }
        if handoffPending() { return depth + handedOff }
        handedOff = 0
        return depth
    }

    /// The figures for stats.
    @usableFromInline
    mutating func snapshot(handoffPending: () -> Bool) -> MailboxSnapshot {
        MailboxSnapshot(depth: phase == .closed ? 0 : waiting(handoffPending: handoffPending),
                        highWaterMark: highWaterMark, dropped: dropped, discarded: discarded)
    }

    // MARK: - Publishers

    /// Offers an event. With `.wait`, a full mailbox answers `.full` unless `mayExceed`, in which
    /// case the event goes in beyond the capacity (a synchronous publisher cannot wait). What is
    /// to be done after the lock goes into `work`: the consumers to wake, the events dropped from
    /// the head to release (both rare: the usual offer adds nothing). `mayHandOff`: enough
    /// events wait to hand them to a consumer that wants them (``handOff(into:)``).
    @inlinable @inline(__always)
    mutating func offer(_ item: Item, mayExceed: Bool, handoffPending: () -> Bool, work: inout MailboxWork)
        -> (outcome: OfferOutcome, mayHandOff: Bool)
    {
        guard !isRefusing else {
            discarded += 1
            return (.closed, false)
        }
        var outcome = OfferOutcome.accepted
        // The buffer plus the last batch handed off is an upper bound: only when it reaches the
        // capacity is the handoff looked at.
        if depth + handedOff >= capacity, waiting(handoffPending: handoffPending) >= capacity {
            switch overflow {
            case .wait:
                if !mayExceed { return (.full, false) }
            case .dropNewest:
                return (recordDrop(of: item.slot, accepted: false), false)
            case .dropOldest:
                outcome = recordDrop(of: buffer[head].slot, accepted: true)
                head += 1
                if head >= capacity { work.release(trimHead()) }
            }
        }
        buffer.append(item)
        if depth + handedOff > highWaterMark {
            let waiting = waiting(handoffPending: handoffPending)
            if waiting > highWaterMark { highWaterMark = waiting }
        }
        if !consumers.isEmpty { work.wake(takeConsumers()) }
        return (outcome, depth >= Self.handoffThreshold)
    }

    /// Counts a drop; returns the outcome, with a report count when no report is pending.
    @usableFromInline
    mutating func recordDrop(of slot: Unmanaged<TopicSlot>, accepted: Bool) -> OfferOutcome {
        dropped += 1
        // Drops of the bus's own events are counted, not reported: reporting them could feed
        // itself.
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

    /// Forgets the skipped prefix once it is as long as the capacity; returns it, to be released
    /// after the lock.
    @usableFromInline
    mutating func trimHead() -> ContiguousArray<Item> {
        guard head >= capacity else { return [] }
        let trimmed = ContiguousArray(buffer[..<head])
        buffer.removeFirst(head)
        head = 0
        return trimmed
    }

    /// A batch handed to the consumer: where its events start, and the drops it reports.
    @usableFromInline
    struct HandOff: Sendable, Equatable {
        @usableFromInline var start: Int
        /// Drops since the last report, for the publisher handing over to report now (0: none).
        @usableFromInline var dropsToReport: Int
        @usableFromInline var droppedTotal: Int
    }

    /// Moves the waiting events into `items` (an emptied buffer, with the capacity the next one
    /// needs), for the consumer to take without the lock; the mailbox then counts them as
    /// handed off. Drops since the last batch are reported by the publisher handing over, as a
    /// consumer taking a batch would: left to the consumer, they would be reported after the
    /// next drops, which a publisher reports at once.
    @usableFromInline
    mutating func handOff(into items: inout ContiguousArray<Item>) -> HandOff {
        swap(&items, &buffer)
        let start = head
        head = 0
        let handed = HandOff(start: start, dropsToReport: unreportedDrops, droppedTotal: dropped)
        unreportedDrops = 0
        reportPending = false
        handedOff = items.count - start
        return handed
    }

    /// Registers a publisher about to wait for room; its id, for ``cancelProducer(_:)``.
    @usableFromInline
    mutating func makeProducerID() -> UInt64 {
        nextProducerID &+= 1
        return nextProducerID
    }

    /// A publisher waits for room: it goes on at once if there is room, the mailbox refuses
    /// events, or its task is cancelled (`isCancelled`, read under the lock so that a
    /// cancellation that ran first is seen); otherwise it waits until a consumer takes events.
    @usableFromInline
    mutating func producerWaits(id: UInt64, _ continuation: Continuation, isCancelled: Bool,
                                handoffPending: () -> Bool) -> SuspendAction {
        if waiting(handoffPending: handoffPending) < capacity || phase == .closed || phase == .drained || isCancelled {
            return .resume(continuation)
        }
        producers.append((id, continuation))
        return .suspended
    }

    /// A waiting publisher's task was cancelled: its continuation, to resume, if it still waits.
    @usableFromInline
    mutating func cancelProducer(_ id: UInt64) -> Continuation? {
        guard let index = producers.firstIndex(where: { $0.id == id }) else { return nil }
        return producers.remove(at: index).continuation
    }

    /// Every waiting publisher, to wake (the consumer took events).
    @usableFromInline
    mutating func takeProducers() -> [Continuation] {
        guard !producers.isEmpty else { return [] }
        defer { producers.removeAll(keepingCapacity: true) }
        return producers.map(\.continuation)
    }

    // MARK: - The consumer

    /// What a consumer got from ``takeBatch(into:)``.
    @usableFromInline
    struct Batch: Sendable, Equatable {
        /// The first index of the batch to deliver.
        @usableFromInline var start: Int
        /// Drops to report now (coalesced since the last report), and the running total.
        @usableFromInline var dropsToReport: Int
        @usableFromInline var droppedTotal: Int
        /// Publishers wait for room: wake them (``takeProducers()``).
        @usableFromInline var wakeProducers: Bool

        @inlinable
        init(start: Int, dropsToReport: Int, droppedTotal: Int, wakeProducers: Bool) {
            self.start = start
            self.dropsToReport = dropsToReport
            self.droppedTotal = droppedTotal
            self.wakeProducers = wakeProducers
        }
    }

    /// Swaps the waiting events into `batch`, an emptied buffer that becomes the next one (so it
    /// keeps its capacity); nil when none wait.
    @inlinable
    mutating func takeBatch(into batch: inout ContiguousArray<Item>) -> Batch? {
        guard depth > 0 else { return nil }
        swap(&buffer, &batch)
        let start = head
        head = 0
        let report = unreportedDrops
        unreportedDrops = 0
        reportPending = false
        return Batch(start: start, dropsToReport: report, droppedTotal: dropped, wakeProducers: hasProducers)
    }

    /// Takes the oldest event for a stream's iterator; nil when none waits. Returns it, the drops
    /// to report with it and their running total, and whom to wake: publishers waiting for room,
    /// and drain waiters when this was the last event. The events handed out stay in the buffer
    /// until it is spent; the spent buffer is swapped into `spent` (empty), to be released
    /// after the lock, since it may hold the last reference to an event.
    ///
    /// The tuple is unlabelled on purpose: the stream's iterator is not specialised, so it looks
    /// up this type's metadata for every event, and labels make that lookup compare strings
    /// (herald-bench async.publish, CPU per event).
    @usableFromInline @inline(__always)
    mutating func takeOne(spent: inout ContiguousArray<Item>) -> (Item, Int, Int, [Continuation])? {
        guard depth > 0 else { return nil }
        let item = buffer[head]
        head += 1
        if head == buffer.count {
            spent.reserveCapacity(buffer.capacity)
            swap(&spent, &buffer)
            head = 0
        }
        let report = unreportedDrops
        unreportedDrops = 0
        reportPending = false
        var wake = takeProducers()
        if isDrained { wake += takeDrainWaiters() }
        return (item, report, dropped, wake)
    }

    /// What to do with a continuation offered to wait.
    @usableFromInline
    enum SuspendAction: Sendable {
        /// Kept; it is resumed later.
        case suspended
        /// Resume it now (outside the lock).
        case resume(Continuation)
    }

    /// What a consumer that found nothing to take does next.
    @usableFromInline
    enum EmptyAction: Sendable {
        /// Wait for events (``consumerWaits(_:handoffPending:)``).
        case wait
        /// End: the mailbox is finished and empty, or closed. Resume these (drain waiters and
        /// publishers) after the lock.
        case end(resume: [Continuation])
    }

    /// The consumer found nothing to take: it ends if the mailbox is no longer open (which then
    /// refuses events and counts as drained), else it waits.
    @usableFromInline
    mutating func consumerFoundNothing(handoffPending: () -> Bool) -> EmptyAction {
        guard waiting(handoffPending: handoffPending) == 0, phase != .open else { return .wait }
        if phase == .finishing { phase = .drained }
        return .end(resume: takeDrainWaiters() + takeProducers())
    }

    /// The consumer waits for events: it goes on at once if events wait or the mailbox is no
    /// longer open (it then looks again).
    @usableFromInline
    mutating func consumerWaits(_ continuation: Continuation, handoffPending: () -> Bool) -> SuspendAction {
        if waiting(handoffPending: handoffPending) > 0 || phase != .open { return .resume(continuation) }
        consumers.append(continuation)
        return .suspended
    }

    /// Counts events the consumer had taken but will not deliver (its subscription ended).
    @usableFromInline
    mutating func abandon(_ count: Int) {
        discarded += count
    }

    /// Marks the mailbox as read by a stream's iterators.
    @usableFromInline
    mutating func readByStream() {
        isStream = true
    }

    @usableFromInline
    mutating func takeConsumers() -> [Continuation] {
        guard !consumers.isEmpty else { return [] }
        defer { consumers = [] }
        return consumers
    }

    mutating func takeDrainWaiters() -> [Continuation] {
        guard !drainWaiters.isEmpty else { return [] }
        defer { drainWaiters.removeAll() }
        return drainWaiters
    }

    // MARK: - Ending

    /// Stops taking events once the waiting ones are taken: wakes the consumers (so an idle one
    /// ends) and, if already drained, the drain waiters. Returns whom to resume.
    @usableFromInline
    mutating func finish() -> [Continuation] {
        if phase == .open { phase = .finishing }
        var wake = takeConsumers()
        if isDrained { wake += takeDrainWaiters() }
        return wake
    }

    /// What a close did.
    @usableFromInline
    struct CloseAction: Sendable {
        /// Events discarded undelivered.
        @usableFromInline var discarded: Int
        /// The buffer's events, to release after the lock.
        @usableFromInline var released: ContiguousArray<Item>
        /// Everyone who waited: publishers, drain waiters, consumers.
        @usableFromInline var resume: [Continuation]
    }

    /// Ends now: discards the waiting events, with those of a batch handed off and not taken
    /// (`reclaimHandoff` takes it back and counts them), and wakes everyone. Nil if it was closed.
    @usableFromInline
    mutating func close(reclaimHandoff: () -> Int) -> CloseAction? {
        guard phase != .closed else { return nil }
        phase = .closed
        let discarded = depth + reclaimHandoff()
        handedOff = 0
        self.discarded += discarded
        var released = ContiguousArray<Item>()
        swap(&released, &buffer)
        head = 0
        return CloseAction(discarded: discarded, released: released,
                           resume: takeProducers() + takeDrainWaiters() + takeConsumers())
    }

    /// Someone waits until the consumer has taken every event after ``finish()``, or the
    /// mailbox closed.
    @usableFromInline
    mutating func waitForDrain(_ continuation: Continuation) -> SuspendAction {
        if isDrained { return .resume(continuation) }
        drainWaiters.append(continuation)
        return .suspended
    }
}
