import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldTesting
import Synchronization
import HeraldTestSupport
import Testing
import HeraldSync

/// Plays scripted outcomes and records the clock's time at each load.
final class ScriptedLoads: Sendable {
    private let state: SyncLock<(outcomes: [LoadOutcome], times: [Duration])>
    private let clock: ManualClock
    private let loadDuration: Duration

    init(_ outcomes: [LoadOutcome], clock: ManualClock, loadDuration: Duration = .zero) {
        self.state = SyncLock((outcomes, []))
        self.clock = clock
        self.loadDuration = loadDuration
    }

    func load() -> LoadOutcome {
        let now = clock.now.offset
        if loadDuration > .zero { clock.advance(by: loadDuration) }
        return state.withLock { state in
            state.times.append(now)
            return state.outcomes.isEmpty ? .finished(items: 1, new: 0) : state.outcomes.removeFirst()
        }
    }

    var seconds: [Double] {
        state.withLock { $0.times.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } }
    }
}

@Suite struct ScheduleTests {
    static let base = Date(timeIntervalSince1970: 1_800_000_000)
    static let ok = LoadOutcome.finished(items: 20, new: 1)
    static let broken = LoadOutcome.failed(LoadError(kind: "httpStatus", message: "down", status: 503))

    /// Runs the schedule for `loads` loads on a manual clock and returns the load times in seconds.
    func drive(_ policy: SchedulePolicy, _ outcomes: [LoadOutcome] = [], loads: Int, seed: UInt64 = 7,
               loadDuration: Duration = .zero) async -> [Double] {
        let clock = ManualClock()
        let script = ScriptedLoads(outcomes, clock: clock, loadDuration: loadDuration)
        let schedule = LoaderSchedule(policy: policy, clock: clock, seed: seed,
                                      now: { Self.base.addingTimeInterval(Double(clock.now.offset.components.seconds)) }) {
            script.load()
        }
        let task = Task { await schedule.run() }
        for _ in 1..<loads {
            await clock.waitForSleepers()
            clock.advanceToNextDeadline()
        }
        await clock.waitForSleepers()
        task.cancel()
        await task.value
        return script.seconds
    }

    @Test func firstRunAtStartThenEveryInterval() async {
        let times = await drive(SchedulePolicy(interval: .seconds(30)), loads: 5)
        #expect(times == [0, 30, 60, 90, 120])
    }

    @Test func tenHoursOfScheduleRunInMilliseconds() async {
        let times = await drive(SchedulePolicy(interval: .seconds(300)), loads: 121)
        #expect(times == (0...120).map { Double($0 * 300) })
    }

    @Test func ticksDoNotDriftWithTheLoadsDuration() async {
        let times = await drive(SchedulePolicy(interval: .seconds(30)), loads: 4, loadDuration: .seconds(10))
        #expect(times == [0, 30, 60, 90])
    }

    @Test func failuresBackOffExponentiallyUpToTheCapAndSuccessResets() async {
        let policy = SchedulePolicy(interval: .seconds(60), backoffInitial: .seconds(2), backoffMax: .seconds(20))
        let outcomes = [Self.broken, Self.broken, Self.broken, Self.broken, Self.broken, Self.broken, Self.ok, Self.broken]
        let times = await drive(policy, outcomes, loads: 9)
        #expect(times == [0, 2, 6, 14, 30, 50, 70, 130, 132])
    }

    @Test func aRateLimitWaitsUntilItsResetPlusTheMargin() async {
        let reset = Self.base.addingTimeInterval(60 + 600)
        let limited = LoadOutcome.failed(LoadError(kind: "rateLimited", message: "Rate limit exceeded", status: 429,
                                                   codes: [88], retryAt: reset))
        let times = await drive(SchedulePolicy(interval: .seconds(60)), [Self.ok, limited, Self.ok], loads: 4)
        #expect(times == [0, 60, 661, 721])
    }

    @Test func aRateLimitWithoutResetWaitsTheFallback() async {
        let limited = LoadOutcome.failed(LoadError(kind: "rateLimited", message: "slow down", status: 429))
        let times = await drive(SchedulePolicy(interval: .seconds(60), rateLimitFallback: .seconds(900)), [limited], loads: 2)
        #expect(times == [0, 900])
    }

    @Test func jitterIsBoundedAndFixedBySeed() async {
        let policy = SchedulePolicy(interval: .seconds(60), jitter: .seconds(10))
        let first = await drive(policy, loads: 20, seed: 42)
        let again = await drive(policy, loads: 20, seed: 42)
        let other = await drive(policy, loads: 20, seed: 43)
        #expect(first == again)
        #expect(first != other)
        let gaps = zip(first.dropFirst(), first).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 60 && $0 <= 70 })
        #expect(Set(gaps).count > 1)
    }

    @Test func backoffSequenceFromTheStateMachine() {
        var state = ScheduleState(policy: SchedulePolicy(interval: .seconds(30), backoffInitial: .seconds(1),
                                                         backoffMax: .seconds(60)), seed: 1)
        let pauses = (0..<8).map { _ in state.pause(after: Self.broken, now: Self.base) }
        #expect(pauses == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        #expect(state.consecutiveFailures == 8)
        #expect(state.pause(after: Self.ok, now: Self.base) == .seconds(30))
        #expect(state.consecutiveFailures == 0)
    }

    @Test func aResetInThePastRetriesAfterTheMarginOnly() {
        var state = ScheduleState(policy: SchedulePolicy(interval: .seconds(30)), seed: 1)
        let stale = LoadOutcome.failed(LoadError(kind: "rateLimited", message: "", retryAt: Self.base.addingTimeInterval(-5)))
        #expect(state.pause(after: stale, now: Self.base) == .seconds(1))
    }
}
