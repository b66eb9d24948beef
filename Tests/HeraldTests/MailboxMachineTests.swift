@testable import Herald
import Testing

/// The mailbox's decisions alone, without a bus, a lock or a consumer task: each transition of
/// ``MailboxMachine`` and what it tells the mailbox to do after the lock. Continuations come from
/// parked tasks (``Parked``), so a test can check which ones the machine returns.
@Suite struct MailboxMachineTests {
    typealias Machine = MailboxMachine<Int>

    /// A task suspended on a continuation the test hands to the machine; resumed by `resume()`.
    struct Parked {
        let continuation: UnsafeContinuation<Void, Never>
        let task: Task<Void, Never>

        static func make() async -> Parked {
            let (stream, out) = AsyncStream.makeStream(of: UnsafeContinuation<Void, Never>.self)
            let task = Task { await withUnsafeContinuation { out.yield($0) } }
            var iterator = stream.makeAsyncIterator()
            return Parked(continuation: await iterator.next()!, task: task)
        }

        /// Whether `other` is this task's continuation (the same pointer).
        func isSame(_ other: UnsafeContinuation<Void, Never>) -> Bool {
            Self.bits(continuation) == Self.bits(other)
        }

        static func bits(_ continuation: UnsafeContinuation<Void, Never>) -> [UInt8] {
            withUnsafeBytes(of: continuation) { Array($0) }
        }

        /// Whether `list` holds exactly these continuations, in any order.
        static func same(_ list: [UnsafeContinuation<Void, Never>], as parked: [Parked]) -> Bool {
            list.map(bits).sorted { $0.lexicographicallyPrecedes($1) }
                == parked.map { bits($0.continuation) }.sorted { $0.lexicographicallyPrecedes($1) }
        }

        /// Resumes the task and waits for it to end.
        func resume() async {
            continuation.resume()
            await task.value
        }
    }

    /// Topic slots outlive every item made from them (the bus core keeps them in real use).
    static let slot = TopicSlot(topic: "test.machine")
    static let internalSlot = TopicSlot(topic: "bus.report")

    static func item(_ value: Int, internal isInternal: Bool = false) -> Machine.Item {
        MailboxItem(payload: value, slot: .passUnretained(isInternal ? internalSlot : slot), sequence: UInt64(value))
    }

    static func noHandoff() -> Bool { false }

    /// Offers `values` in turn; returns the outcomes.
    @discardableResult
    static func offer(_ values: some Sequence<Int>, to m: inout Machine, mayExceed: Bool = false) -> [OfferOutcome] {
        values.map { m.offer(item($0), mayExceed: mayExceed, handoffPending: noHandoff).outcome }
    }

    static func payloads(_ batch: ContiguousArray<Machine.Item>, from start: Int) -> [Int] {
        batch[start...].map(\.payload)
    }

    // MARK: - Offers and policies

    @Test func anOfferBelowCapacityIsAcceptedAndCountsTowardsTheHighWaterMark() {
        var m = Machine(capacity: 4, overflow: .wait)
        let action = m.offer(Self.item(1), mayExceed: false, handoffPending: Self.noHandoff)
        guard case .accepted = action.outcome else { Issue.record("got \(action.outcome)"); return }
        #expect(action.wake == nil && action.release == nil && !action.mayHandOff)
        Self.offer(2...3, to: &m)
        #expect(m.depth == 3)
        #expect(m.snapshot(handoffPending: Self.noHandoff).highWaterMark == 3)
    }

    @Test func waitPolicyAnswersFullAtCapacityUnlessTheOfferMayExceedIt() {
        var m = Machine(capacity: 2, overflow: .wait)
        Self.offer(1...2, to: &m)
        let full = m.offer(Self.item(3), mayExceed: false, handoffPending: Self.noHandoff)
        guard case .full = full.outcome else { Issue.record("got \(full.outcome)"); return }
        #expect(m.depth == 2, "a full answer takes nothing")
        let exceeded = m.offer(Self.item(3), mayExceed: true, handoffPending: Self.noHandoff)
        guard case .accepted = exceeded.outcome else { Issue.record("got \(exceeded.outcome)"); return }
        #expect(m.depth == 3)
        #expect(m.snapshot(handoffPending: Self.noHandoff).highWaterMark == 3)
        #expect(m.dropped == 0)
    }

    @Test func dropNewestRefusesTheArrivingEventAndReportsTheFirstDropOfARun() {
        var m = Machine(capacity: 2, overflow: .dropNewest)
        Self.offer(1...2, to: &m)
        let outcomes = Self.offer(3...5, to: &m)
        var reports: [Int] = []
        for outcome in outcomes {
            guard case .dropped(_, let accepted, let report, _) = outcome else { Issue.record("got \(outcome)"); return }
            #expect(!accepted)
            reports.append(report)
        }
        #expect(reports == [1, 0, 0], "one report while it is pending; the rest coalesce")
        #expect(m.dropped == 3 && m.unreportedDrops == 2 && m.reportPending)
        var batch = ContiguousArray<Machine.Item>()
        let taken = m.takeBatch(into: &batch)
        #expect(Self.payloads(batch, from: taken?.start ?? 0) == [1, 2])
        #expect(taken?.dropsToReport == 2 && taken?.droppedTotal == 3, "the consumer reports the coalesced drops")
        #expect(!m.reportPending)
    }

    @Test func dropOldestTakesTheArrivingEventAndTrimsTheSkippedPrefixAtCapacity() {
        var m = Machine(capacity: 3, overflow: .dropOldest)
        Self.offer(1...3, to: &m)
        let first = m.offer(Self.item(4), mayExceed: false, handoffPending: Self.noHandoff)
        guard case .dropped(let slot, let accepted, let report, let total) = first.outcome else {
            Issue.record("got \(first.outcome)"); return
        }
        #expect(slot.toOpaque() == Unmanaged.passUnretained(Self.slot).toOpaque())
        #expect(accepted && report == 1 && total == 1)
        #expect(first.release == nil, "the skipped prefix is kept until it is as long as the capacity")
        Self.offer(5...5, to: &m)
        let third = m.offer(Self.item(6), mayExceed: false, handoffPending: Self.noHandoff)
        #expect(third.release?.map(\.payload) == [1, 2, 3], "three skipped: released after the lock")
        #expect(m.head == 0 && m.depth == 3)
        var batch = ContiguousArray<Machine.Item>()
        let taken = m.takeBatch(into: &batch)
        #expect(Self.payloads(batch, from: taken?.start ?? 0) == [4, 5, 6])
    }

    @Test func dropsOfTheBusOwnEventsAreCountedNotReported() {
        var m = Machine(capacity: 1, overflow: .dropNewest)
        Self.offer(1...1, to: &m)
        let outcome = m.offer(Self.item(2, internal: true), mayExceed: false, handoffPending: Self.noHandoff).outcome
        guard case .dropped(_, _, let report, let total) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(report == 0 && total == 1)
        #expect(m.unreportedDrops == 0 && !m.reportPending)
    }

    @Test func anOfferWakesTheWaitingConsumerOnce() async {
        var m = Machine(capacity: 4, overflow: .wait)
        let consumer = await Parked.make()
        guard case .suspended = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff) else {
            Issue.record("an open, empty mailbox keeps its consumer waiting"); return
        }
        let first = m.offer(Self.item(1), mayExceed: false, handoffPending: Self.noHandoff)
        #expect(first.wake.map { Parked.same($0, as: [consumer]) } == true)
        #expect(m.offer(Self.item(2), mayExceed: false, handoffPending: Self.noHandoff).wake == nil)
        await consumer.resume()
    }

    @Test func enoughWaitingEventsMayBeHandedOff() {
        var m = Machine(capacity: 100, overflow: .wait)
        let below = (1..<Machine.handoffThreshold).map {
            m.offer(Self.item($0), mayExceed: false, handoffPending: Self.noHandoff).mayHandOff
        }
        #expect(!below.contains(true))
        #expect(m.offer(Self.item(0), mayExceed: false, handoffPending: Self.noHandoff).mayHandOff)
    }

    // MARK: - The handoff

    @Test func handedOffEventsCountAsWaitingUntilTheConsumerTakesThem() {
        var m = Machine(capacity: 4, overflow: .wait)
        Self.offer(1...3, to: &m)
        var items = ContiguousArray<Machine.Item>()
        let handed = m.handOff(into: &items)
        #expect(handed == .init(start: 0, dropsToReport: 0, droppedTotal: 0))
        #expect(items.map(\.payload) == [1, 2, 3] && m.depth == 0 && m.handedOff == 3)
        var pending = true
        #expect(m.waiting { pending } == 3)
        _ = m.offer(Self.item(4), mayExceed: false) { pending }
        let full = m.offer(Self.item(5), mayExceed: false) { pending }
        guard case .full = full.outcome else { Issue.record("handed-off events fill the capacity: \(full.outcome)"); return }
        pending = false
        #expect(m.waiting { pending } == 1, "taken: forgotten")
        #expect(m.handedOff == 0)
        guard case .accepted = m.offer(Self.item(5), mayExceed: false, handoffPending: { pending }).outcome else {
            Issue.record("room again once the batch is taken"); return
        }
    }

    @Test func aHandOffReportsTheDropsSinceTheLastReport() {
        var m = Machine(capacity: 1, overflow: .dropNewest)
        Self.offer(1...3, to: &m)
        #expect(m.unreportedDrops == 1 && m.reportPending)
        var items = ContiguousArray<Machine.Item>()
        let handed = m.handOff(into: &items)
        #expect(handed == .init(start: 0, dropsToReport: 1, droppedTotal: 2))
        #expect(m.unreportedDrops == 0 && !m.reportPending)
    }

    // MARK: - Publishers waiting for room

    @Test func aPublisherWaitsOnlyWhileTheMailboxIsFullAndOpen() async {
        var m = Machine(capacity: 1, overflow: .wait)
        let early = await Parked.make()
        guard case .resume(let now) = m.producerWaits(id: m.makeProducerID(), early.continuation, isCancelled: false,
                                                      handoffPending: Self.noHandoff) else {
            Issue.record("room: go on at once"); return
        }
        #expect(early.isSame(now))
        await early.resume()

        Self.offer(1...1, to: &m)
        let cancelled = await Parked.make()
        guard case .resume = m.producerWaits(id: m.makeProducerID(), cancelled.continuation, isCancelled: true,
                                             handoffPending: Self.noHandoff) else {
            Issue.record("a cancelled publisher never waits"); return
        }
        await cancelled.resume()

        let waiting = await Parked.make()
        guard case .suspended = m.producerWaits(id: m.makeProducerID(), waiting.continuation, isCancelled: false,
                                                handoffPending: Self.noHandoff) else {
            Issue.record("full: wait"); return
        }
        var batch = ContiguousArray<Machine.Item>()
        let taken = m.takeBatch(into: &batch)
        #expect(taken?.wakeProducers == true, "the consumer learns that publishers wait")
        #expect(Parked.same(m.takeProducers(), as: [waiting]))
        #expect(m.takeProducers().isEmpty)
        await waiting.resume()
    }

    @Test func aCancelledPublisherIsRemovedByItsID() async {
        var m = Machine(capacity: 1, overflow: .wait)
        Self.offer(1...1, to: &m)
        let first = await Parked.make(), second = await Parked.make()
        let firstID = m.makeProducerID(), secondID = m.makeProducerID()
        #expect(firstID != secondID)
        _ = m.producerWaits(id: firstID, first.continuation, isCancelled: false, handoffPending: Self.noHandoff)
        _ = m.producerWaits(id: secondID, second.continuation, isCancelled: false, handoffPending: Self.noHandoff)
        let removed = m.cancelProducer(secondID)
        #expect(removed.map(second.isSame) == true)
        #expect(m.cancelProducer(secondID) == nil, "once")
        #expect(Parked.same(m.takeProducers(), as: [first]))
        await first.resume()
        await second.resume()
    }

    // MARK: - The consumer

    @Test func aBatchTakesEverythingWaitingFromTheHead() {
        var m = Machine(capacity: 8, overflow: .wait)
        var empty = ContiguousArray<Machine.Item>()
        #expect(m.takeBatch(into: &empty) == nil, "empty: nothing")
        Self.offer(1...3, to: &m)
        var batch = ContiguousArray<Machine.Item>()
        batch.reserveCapacity(64)
        let taken = m.takeBatch(into: &batch)
        #expect(taken == .init(start: 0, dropsToReport: 0, droppedTotal: 0, wakeProducers: false))
        #expect(Self.payloads(batch, from: 0) == [1, 2, 3])
        #expect(m.depth == 0 && m.buffer.capacity >= 64, "the consumer's emptied buffer is the next one")
    }

    @Test func aStreamTakesOneEventAtATimeAndReleasesTheSpentBuffer() {
        var m = Machine(capacity: 8, overflow: .dropNewest)
        m.readByStream()
        Self.offer(1...2, to: &m)
        var spent = ContiguousArray<Machine.Item>()
        let first = m.takeOne(spent: &spent)
        #expect(first?.0.payload == 1 && spent.isEmpty)
        let second = m.takeOne(spent: &spent)
        #expect(second?.0.payload == 2)
        #expect(spent.map(\.payload) == [1, 2], "the spent buffer goes out to be released after the lock")
        var none = ContiguousArray<Machine.Item>()
        #expect(m.takeOne(spent: &none) == nil)
        #expect(none.isEmpty)
    }

    @Test func aStreamReportsDropsWithTheNextEvent() {
        var m = Machine(capacity: 1, overflow: .dropNewest)
        m.readByStream()
        Self.offer(1...3, to: &m)
        var spent = ContiguousArray<Machine.Item>()
        let taken = m.takeOne(spent: &spent)
        #expect(taken?.1 == 1 && taken?.2 == 2)
    }

    @Test func anOpenEmptyMailboxKeepsItsConsumerWaitingAndAFullOneLetsItGoOn() async {
        var m = Machine(capacity: 4, overflow: .wait)
        guard case .wait = m.consumerFoundNothing(handoffPending: Self.noHandoff) else {
            Issue.record("open: wait"); return
        }
        Self.offer(1...1, to: &m)
        let consumer = await Parked.make()
        guard case .resume(let now) = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff) else {
            Issue.record("an event waits: go on"); return
        }
        #expect(consumer.isSame(now))
        await consumer.resume()
        #expect(m.consumers.isEmpty)
    }

    @Test func abandonedEventsCountAsDiscarded() {
        var m = Machine(capacity: 4, overflow: .wait)
        m.abandon(3)
        #expect(m.snapshot(handoffPending: Self.noHandoff).discarded == 3)
    }

    // MARK: - Finish and drain

    @Test func finishWakesAnIdleConsumerWhichThenEndsAndReleasesTheDrainWaiters() async {
        var m = Machine(capacity: 4, overflow: .wait)
        let consumer = await Parked.make(), drainer = await Parked.make(), publisher = await Parked.make()
        _ = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff)
        guard case .suspended = m.waitForDrain(drainer.continuation) else { Issue.record("open: not drained"); return }
        Self.offer(1...4, to: &m)  // wakes the consumer
        #expect(m.consumers.isEmpty)
        _ = m.producerWaits(id: m.makeProducerID(), publisher.continuation, isCancelled: false,
                            handoffPending: Self.noHandoff)
        let finished = m.finish()
        #expect(finished.isEmpty, "nobody to wake: the consumer was woken by the offer; events still wait")
        #expect(m.phase == .finishing && !m.isDrained)
        guard case .accepted = m.offer(Self.item(5), mayExceed: true, handoffPending: Self.noHandoff).outcome else {
            Issue.record("finishing still takes events"); return
        }
        guard case .wait = m.consumerFoundNothing(handoffPending: Self.noHandoff) else {
            Issue.record("events wait: no end yet"); return
        }
        var batch = ContiguousArray<Machine.Item>()
        _ = m.takeBatch(into: &batch)
        guard case .end(let resume) = m.consumerFoundNothing(handoffPending: Self.noHandoff) else {
            Issue.record("finishing and empty: the consumer ends"); return
        }
        #expect(Parked.same(resume, as: [drainer, publisher]))
        #expect(m.phase == .drained && m.isDrained)
        guard case .closed = m.offer(Self.item(6), mayExceed: true, handoffPending: Self.noHandoff).outcome else {
            Issue.record("drained: refused"); return
        }
        #expect(m.discarded == 1)
        let late = await Parked.make()
        guard case .resume = m.waitForDrain(late.continuation) else { Issue.record("drained: go on"); return }
        for parked in [consumer, drainer, publisher, late] { await parked.resume() }
    }

    @Test func finishWakesWaitingConsumersSoThatTheyEnd() async {
        var m = Machine(capacity: 4, overflow: .wait)
        let consumer = await Parked.make()
        _ = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff)
        #expect(Parked.same(m.finish(), as: [consumer]))
        #expect(m.finish().isEmpty, "a second finish changes nothing")
        guard case .resume = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff) else {
            Issue.record("finishing: a consumer that looks again does not sleep"); return
        }
        await consumer.resume()
    }

    @Test func aStreamMailboxIsDrainedWhenFinishingAndEmpty() async {
        var m = Machine(capacity: 4, overflow: .wait)
        m.readByStream()
        Self.offer(1...1, to: &m)
        let drainer = await Parked.make()
        _ = m.finish()
        guard case .suspended = m.waitForDrain(drainer.continuation) else { Issue.record("an event waits"); return }
        var spent = ContiguousArray<Machine.Item>()
        let last = m.takeOne(spent: &spent)
        #expect(last.map { Parked.same($0.3, as: [drainer]) } == true, "the last event releases the drain")
        #expect(m.isDrained && m.phase == .finishing)
        await drainer.resume()
    }

    @Test func finishOfAnEmptyStreamReleasesTheDrainWaitersAtOnce() async {
        var m = Machine(capacity: 4, overflow: .wait)
        m.readByStream()
        let drainer = await Parked.make()
        _ = m.waitForDrain(drainer.continuation)
        #expect(Parked.same(m.finish(), as: [drainer]))
        await drainer.resume()
    }

    // MARK: - Close

    @Test func closeDiscardsWhatWaitsWakesEveryoneAndRefusesLaterOffers() async {
        var m = Machine(capacity: 2, overflow: .wait)
        let consumer = await Parked.make(), drainer = await Parked.make(), publisher = await Parked.make()
        _ = m.waitForDrain(drainer.continuation)
        Self.offer(1...2, to: &m)
        var items = ContiguousArray<Machine.Item>()
        _ = m.handOff(into: &items)
        Self.offer(3...4, to: &m, mayExceed: true)
        _ = m.producerWaits(id: m.makeProducerID(), publisher.continuation, isCancelled: false) { true }
        var reclaimed = false
        let closed = m.close {
            reclaimed = true
            return 2
        }
        #expect(reclaimed, "the batch handed off and not taken is reclaimed")
        #expect(closed?.discarded == 4 && m.discarded == 4)
        #expect(closed?.released.map(\.payload) == [3, 4])
        #expect(closed.map { Parked.same($0.resume, as: [drainer, publisher]) } == true)
        #expect(m.phase == .closed && m.depth == 0 && m.handedOff == 0)
        #expect(m.snapshot(handoffPending: Self.noHandoff).depth == 0)
        #expect(m.close { Issue.record("closed once"); return 0 } == nil)
        guard case .closed = m.offer(Self.item(5), mayExceed: true, handoffPending: Self.noHandoff).outcome else {
            Issue.record("closed: refused"); return
        }
        guard case .end(let resume) = m.consumerFoundNothing(handoffPending: Self.noHandoff), resume.isEmpty else {
            Issue.record("closed: the consumer ends, with nobody left to wake"); return
        }
        #expect(m.phase == .closed)
        guard case .resume = m.producerWaits(id: m.makeProducerID(), consumer.continuation, isCancelled: false,
                                             handoffPending: Self.noHandoff) else {
            Issue.record("closed: publishers go on"); return
        }
        for parked in [consumer, drainer, publisher] { await parked.resume() }
    }

    @Test func closeWakesASleepingConsumer() async {
        var m = Machine(capacity: 2, overflow: .wait)
        let consumer = await Parked.make()
        _ = m.consumerWaits(consumer.continuation, handoffPending: Self.noHandoff)
        let closed = m.close { 0 }
        #expect(closed.map { Parked.same($0.resume, as: [consumer]) } == true)
        #expect(closed?.discarded == 0)
        await consumer.resume()
    }

    @Test func closeAfterTheConsumerEndedStillClosesAndDiscardsNothingMore() {
        var m = Machine(capacity: 2, overflow: .wait)
        _ = m.finish()
        guard case .end = m.consumerFoundNothing(handoffPending: Self.noHandoff) else { Issue.record("ends"); return }
        #expect(m.phase == .drained)
        #expect(m.close { 0 }?.discarded == 0)
        #expect(m.phase == .closed)
    }
}

extension MailboxMachine {
    /// An offer, with what it left for after the lock taken out of the work list (not run: the
    /// test resumes the continuations itself).
    mutating func offer(_ item: Item, mayExceed: Bool, handoffPending: () -> Bool)
        -> (outcome: OfferOutcome, wake: [Continuation]?, release: ContiguousArray<Item>?, mayHandOff: Bool)
    {
        var work = MailboxWork()
        let (outcome, mayHandOff) = offer(item, mayExceed: mayExceed, handoffPending: handoffPending, work: &work)
        #expect((work.released?.count ?? 0) <= 1, "one trim per offer at most")
        return (outcome, work.consumers, work.released?.first as? ContiguousArray<Item>, mayHandOff)
    }
}
