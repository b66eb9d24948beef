import Foundation
import Herald
import HeraldLoaders
import HeraldSync
import HeraldTestSupport
import HeraldTesting
import Testing
@testable import HeraldRuntime

/// A check the test holds shut: callers wait in ``pass()`` while it is closed.
private actor Valve {
    private var closed = false
    private var held: [CheckedContinuation<Void, Never>] = []
    private var watchers: [CheckedContinuation<Void, Never>] = []

    func close() { closed = true }

    func open() {
        closed = false
        held.forEach { $0.resume() }
        held = []
    }

    /// Returns at once while open; while closed, once opened.
    func pass() async {
        guard closed else { return }
        await withCheckedContinuation { continuation in
            held.append(continuation)
            watchers.forEach { $0.resume() }
            watchers = []
        }
    }

    /// Returns once a caller waits in ``pass()``.
    func waitUntilHolding() async {
        guard held.isEmpty else { return }
        await withCheckedContinuation { watchers.append($0) }
    }
}

/// systemd's watchdog is fed only by heartbeats that came through the bus, while the loaders
/// are alive: not by the timer that publishes them (WatchdogService on a manual clock).
@Suite(.timeLimit(.minutes(5))) struct WatchdogServiceTests {
    static let interval: Duration = .seconds(10)

    /// A running watchdog and what it sent.
    struct Rig {
        let bus = EventBus()
        let clock = ManualClock()
        /// Heartbeats published (an inline subscriber of the test's counts them).
        let published = Locked(0)
        let sentCount = Locked(0)
        let sent: AsyncStream<String>
        let task: Task<Void, Never>
        let subscription: Subscription

        init(loadersAlive: @escaping @Sendable () async -> Bool) throws {
            let (sent, sender) = AsyncStream.makeStream(of: String.self)
            self.sent = sent
            let (published, sentCount, clock) = (published, sentCount, clock)
            subscription = try bus.subscribe(to: WatchdogHeartbeat.self, name: "test.count") { _ in published.withLock { $0 += 1 } }
            let service = WatchdogService(
                interval: WatchdogServiceTests.interval, bus: bus, loadersAlive: loadersAlive,
                sleep: { try await clock.sleep(for: $0) },
                send: { message in
                    sentCount.withLock { $0 += 1 }
                    sender.yield(message)
                })
            task = Task { try? await service.run() }
        }

        /// Moves the clock one interval on and returns once the next heartbeat was published
        /// (the timer sleeps again).
        func tick() async {
            clock.advance(by: WatchdogServiceTests.interval)
            await clock.waitForSleepers(1)
        }

        func stop() async {
            task.cancel()
            await task.value
            subscription.cancel()
            _ = await bus.shutdown(timeout: .seconds(5))
        }
    }

    @Test func aHeartbeatStuckOnItsWayThroughTheBusStopsTheBeatsAndTheyResumeWhenItMoves() async throws {
        let valve = Valve()
        // The heartbeat's delivery passes the valve: closed, the heartbeats that come through the
        // bus stop there (their mailbox fills, as behind a stuck subscriber or pool).
        let rig = try Rig(loadersAlive: { await valve.pass(); return true })
        var sent = rig.sent.makeAsyncIterator()
        await rig.clock.waitForSleepers(1)
        #expect(await sent.next() == "WATCHDOG=1")
        await rig.tick()
        #expect(await sent.next() == "WATCHDOG=1")

        await valve.close()
        await rig.tick()
        await valve.waitUntilHolding()
        for _ in 1...5 { await rig.tick() }
        // The timer went on publishing (8 heartbeats in all), but no beat left since beat 3 stuck.
        #expect(rig.published.withLock { $0 } == 8)
        #expect(rig.sentCount.withLock { $0 } == 2)

        await valve.open()
        // Beat 3, then the 4 the mailbox kept (5 to 8; 4 was dropped as the oldest).
        for _ in 1...5 { #expect(await sent.next() == "WATCHDOG=1") }
        await rig.tick()
        #expect(await sent.next() == "WATCHDOG=1")
        #expect(rig.sentCount.withLock { $0 } == 8)
        await rig.stop()
    }

    @Test func heartbeatsThatComeThroughWhileTheLoadersAreNotAliveAreNotBeats() async throws {
        let alive = Locked(true)
        let (asked, asker) = AsyncStream.makeStream(of: Bool.self)
        let rig = try Rig(loadersAlive: {
            let answer = alive.withLock { $0 }
            asker.yield(answer)
            return answer
        })
        var sent = rig.sent.makeAsyncIterator()
        var questions = asked.makeAsyncIterator()
        await rig.clock.waitForSleepers(1)
        #expect(await questions.next() == true)
        #expect(await sent.next() == "WATCHDOG=1")

        alive.withLock { $0 = false }
        for _ in 1...3 {
            await rig.tick()
            #expect(await questions.next() == false)
        }
        #expect(rig.sentCount.withLock { $0 } == 1)

        alive.withLock { $0 = true }
        await rig.tick()
        #expect(await questions.next() == true)
        #expect(await sent.next() == "WATCHDOG=1")
        #expect(rig.sentCount.withLock { $0 } == 2)
        await rig.stop()
    }

    @Test func loadersAreAliveWhileEachScheduleRunsAndNoneMissedItsRunByAWholeWatchdogTimeout() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var snapshots: [String: ScheduleSnapshot] = [:]
        var waiting = ScheduleSnapshot()
        waiting.state = .waiting
        waiting.nextRun = now.addingTimeInterval(30)
        var loading = ScheduleSnapshot()
        loading.state = .loading
        loading.lastRun = now.addingTimeInterval(-3600)  // a long load is not a stuck one
        snapshots["home"] = waiting
        snapshots["todos"] = loading
        func liveness(running: Set<String> = ["home", "todos"], _ snapshots: [String: ScheduleSnapshot]) -> LoaderLiveness {
            LoaderLiveness(ids: ["home", "todos"], running: { running.contains($0) }, snapshot: { snapshots[$0] })
        }
        #expect(liveness(snapshots).problem(now: now, grace: .seconds(20)) == nil)
        // A schedule that ended is not alive.
        #expect(liveness(running: ["home"], snapshots).problem(now: now, grace: .seconds(20)) == "loaders.todos does not run")
        // A run due 25 s ago, with a 20 s watchdog timeout: the schedule is stuck; 15 s ago it is not yet.
        var late = snapshots
        late["home"]?.nextRun = now.addingTimeInterval(-25)
        #expect(liveness(late).problem(now: now, grace: .seconds(20))?.hasPrefix("loaders.home: its run due at ") == true)
        late["home"]?.nextRun = now.addingTimeInterval(-15)
        #expect(liveness(late).problem(now: now, grace: .seconds(20)) == nil)
        var stopped = snapshots
        stopped["home"]?.state = .stopped
        #expect(liveness(stopped).problem(now: now, grace: .seconds(20)) == "loaders.home: its schedule stopped")
    }
}
