import Dispatch
import Foundation
@testable import Herald
import HeraldTestSupport
import HeraldSync
import Testing
import HeraldTesting

/// Shutdown's count of in-flight publishes, pinned deterministically: a report the bus posts
/// while draining must not stand in for a publish accepted before the doors closed.
///
/// Before the fix the bus counted every finished publish, reports included, against the last
/// sequence number it had let through: the report below completed the count while the accepted
/// publish was still parked in a handler, so the drain finished the mailboxes early and the
/// report's `drained` was wrong. Seen failing with `counted` forced to true in `claim`.
@Suite struct ParkedPublishAccountingTests {
    /// Parks the thread that delivers, never a task of the pool.
    final class ThreadGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let arrived = DispatchSemaphore(value: 0)
        func park() { arrived.signal(); semaphore.wait() }
        func open() { semaphore.signal() }
        /// Waits (on a thread of its own) until a deliverer has parked.
        func waitForArrival() async { _ = try? await onDedicatedThread { self.arrived.wait() } }
    }

    @Test(.timeLimit(.minutes(5)))
    func aReportPostedWhileDrainingLeavesTheParkedPublishCounted() async throws {
        let bus = EventBus()
        let clock = ManualClock()
        let gate = ThreadGate()
        // An inline handler that parks the publisher on tick 1, before the queued subscriber
        // after it in delivery order has the event.
        let parker = try bus.subscribe(to: Tick.self) { tick in if tick.number == 1 { gate.park() } }
        let got = Recording<Int>()
        let queued = try bus.subscribe(to: Tick.self, delivery: .queued()) { got.append($0.number) }
        // A stream that drops: its first drop is reported at once, the next ones when its
        // reader next reads, which the test makes it do while the bus drains.
        let lossy = try bus.events(of: LoadFinished.self, capacity: 1, overflow: .dropNewest)
        let reports = Recording<Int>()
        let watcher = try bus.subscribe(to: EventsDropped.self) { reports.append($0.count) }
        try bus.post(LoadFinished(loader: "home", count: 1))
        try bus.post(LoadFinished(loader: "home", count: 2))   // dropped, reported at once
        try bus.post(LoadFinished(loader: "home", count: 3))   // dropped, reported by the reader
        #expect(await reports.wait(forCount: 1))

        // The accepted publish, parked in the inline handler on a thread of its own.
        let publisher = Thread { _ = try? bus.post(Tick(number: 1)) }
        publisher.start()
        await gate.waitForArrival()

        let shutdown = Task { await bus.shutdown(deadline: clock.now.advanced(by: .seconds(3_600)), clock: clock) }
        await clock.waitForSleepers()
        #expect(bus.core.publishesShutdownAwaits == 1, "the parked publish is awaited")
        var reader = lossy.makeAsyncIterator()
        // Reports the second drop, a bus event, while the bus drains; synchronously, so its
        // publish has finished when `next()` returns.
        #expect(await reader.next()?.count == 1)
        #expect(reports.values == [1, 1])
        #expect(bus.core.publishesShutdownAwaits == 1, "the report did not stand in for the parked publish")
        #expect(got.values.isEmpty)

        gate.open()
        let report = await shutdown.value
        #expect(report.drained)
        #expect(report.discarded.isEmpty)
        #expect(got.values == [1], "the parked publish reached the queued subscriber before its mailbox finished")
        #expect(bus.core.publishesShutdownAwaits == 0)
        withExtendedLifetime((parker, queued, watcher)) {}
    }
}
