import Herald
import Testing
import HeraldTesting

@Suite struct SequenceTests {
    @Test func aBusNumbersItsEventsFromTheConfiguredFirstSequence() async throws {
        let bus = EventBus(configuration: .init(firstSequence: 1_001))
        let seen = Recording<UInt64>()
        let token = try bus.subscribe(matching: "test.>", delivery: .queued()) { envelope in seen.append(envelope.sequence) }
        let first = try bus.post(Tick(number: 1))
        let second = try await bus.publish(Tick(number: 2))
        try bus.post(Tick(number: 3))

        #expect(first.sequence == 1_001)
        #expect(second.sequence == 1_002)
        #expect(bus.stats().published == 3, "the count is of this bus's events, not the first number")
        // Shutdown waits for the publishes it let through: counted from the same base, or it
        // would wait for publishes that never happened and report the drain as failed.
        let report = await bus.shutdown(timeout: .seconds(3_600))
        #expect(report.drained)
        #expect(seen.values == [1_001, 1_002, 1_003])
        withExtendedLifetime(token) {}
    }

    @Test func aFirstSequenceOfZeroIsTakenAsOne() throws {
        let bus = EventBus(configuration: .init(firstSequence: 0))
        #expect(try bus.post(Tick(number: 1)).sequence == 1)
        #expect(EventBus().stats().published == 0)
    }
}
