import Herald
import HeraldTestSupport
import Testing
import HeraldTesting

/// A queued subscription's task that has taken a batch asks for the next one, and a publish that
/// finds enough events waiting hands them over outside the bus lock. These tests park the task
/// inside its first batch (a batch handler awaiting a gate), so the handover happens while it is
/// busy, and check that events handed over still count as waiting: for the capacity, the
/// statistics, and what shutdown discards.
@Suite struct HandoffTests {
    /// A batch subscription on `test.tick` whose handler records each batch's numbers and, in
    /// its first batch, waits at `gate`.
    static func parkedSubscriber(on bus: EventBus, gate: Gate, batches: Recording<[Int]>, capacity: Int,
                                 overflow: OverflowPolicy = .wait) throws -> Subscription {
        try bus.subscribeInBatches(matching: "test.tick", name: "busy", capacity: capacity, overflow: overflow) { batch in
            batches.append(batch.map { ($0.event as? Tick)?.number ?? -1 })
            if batches.count == 1 { await gate.wait() }
        }
    }

    @Test func eventsHandedToABusyConsumerCountAsWaitingAndArriveInOrder() async throws {
        let bus = EventBus()
        let gate = Gate()
        let batches = Recording<[Int]>()
        let token = try Self.parkedSubscriber(on: bus, gate: gate, batches: batches, capacity: 1_000)
        try bus.post(Tick(number: 0))
        #expect(await batches.wait(forCount: 1), "the task holds its first batch")

        for number in 1...100 { try bus.post(Tick(number: number)) }
        let waiting = try #require(bus.stats().subscription(named: "busy"))
        #expect(waiting.queueDepth == 100, "the events handed over are still waiting")
        #expect(waiting.highWaterMark == 100)

        gate.open()
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(batches.values.flatMap { $0 } == Array(0...100))
        #expect(batches.values.count >= 3, "the first batch, the one handed over, and the rest")
        #expect(bus.stats().subscription(named: "busy")?.delivered == 101)
        withExtendedLifetime(token) {}
    }

    @Test func aShutdownAtItsDeadlineDiscardsAHandedOverBatchAndCountsIt() async throws {
        let bus = EventBus()
        let clock = ManualClock()
        let gate = Gate()
        let batches = Recording<[Int]>()
        let token = try Self.parkedSubscriber(on: bus, gate: gate, batches: batches, capacity: 1_000)
        try bus.post(Tick(number: 0))
        #expect(await batches.wait(forCount: 1))
        for number in 1...20 { try bus.post(Tick(number: number)) }

        let shutdown = Task { await bus.shutdown(deadline: clock.now.advanced(by: .seconds(5)), clock: clock) }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        let report = await shutdown.value
        #expect(!report.drained)
        #expect(report.discarded == [.init(subscriptionID: token.id, subscription: "busy", count: 20)],
                "the batch handed over and the events after it")
        gate.open()
        #expect(batches.values == [[0]], "nothing of what was discarded is delivered")
        withExtendedLifetime(token) {}
    }

    @Test func aHandedOverBatchCountsAgainstTheCapacityAndItsTakingWakesAWaitingPublisher() async throws {
        let bus = EventBus()
        let gate = Gate()
        let batches = Recording<[Int]>()
        let token = try Self.parkedSubscriber(on: bus, gate: gate, batches: batches, capacity: 16)
        try await bus.publish(Tick(number: 0))
        #expect(await batches.wait(forCount: 1))

        let published = Recording<Int>()
        let publisher = Task {
            for number in 1...60 {
                try await bus.publish(Tick(number: number))
                published.append(number)
            }
        }
        #expect(await published.wait(forCount: 16), "16 fit: 8 or more handed over, the rest in the mailbox")
        #expect((bus.stats().subscription(named: "busy")?.queueDepth ?? 0) <= 16)

        gate.open()
        try await publisher.value
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(batches.values.flatMap { $0 } == Array(0...60))
        #expect(bus.stats().subscription(named: "busy")?.highWaterMark == 16,
                "never more than the capacity waited, counting what was handed over")
        withExtendedLifetime(token) {}
    }

    @Test func dropNewestCountsTheHandedOverBatchAsWaiting() async throws {
        let bus = EventBus()
        let gate = Gate()
        let batches = Recording<[Int]>()
        let token = try Self.parkedSubscriber(on: bus, gate: gate, batches: batches, capacity: 10,
                                              overflow: .dropNewest)
        try bus.post(Tick(number: 0))
        #expect(await batches.wait(forCount: 1))
        for number in 1...30 { try bus.post(Tick(number: number)) }
        #expect(bus.stats().subscription(named: "busy")?.queueDepth == 10)
        #expect(bus.stats().subscription(named: "busy")?.dropped == 20)

        gate.open()
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(batches.values.flatMap { $0 } == Array(0...10), "the first ten kept, the newest dropped")
        withExtendedLifetime(token) {}
    }
}
