import Herald
import HeraldTesting
import Testing

private struct Ping: Event, Hashable {
    var number: Int
    var topic: Topic { "test.ping" }
}

private struct Pong: Event, Hashable {
    var number: Int
    var topic: Topic { "other.pong" }
}

@Suite struct RecordingTests {
    @Test func aWaitReturnsOnceItsConditionHoldsWhicheverTaskAppends() async {
        let recording = Recording<Int>()
        async let waited = recording.wait { $0.count == 100 }
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<100 { group.addTask { recording.append(number) } }
        }
        #expect(await waited)
        #expect(recording.count == 100 && Set(recording.values) == Set(0..<100))
        #expect(await recording.wait(forCount: 100))
        #expect(await recording.wait(for: 42))
    }

    @Test func aWaitWhoseConditionNeverHoldsAnswersFalseAfterItsTimeout() async {
        let recording = Recording<String>()
        recording.append("a")
        #expect(await recording.wait(for: "a", timeout: .milliseconds(1)))
        #expect(!(await recording.wait(for: "b", timeout: .milliseconds(1))))
        #expect(!(await recording.wait(forCount: 2, timeout: .milliseconds(1))))
        recording.append("b")
        #expect(await recording.wait(for: "b"))
    }
}

@Suite struct EventRecorderTests {
    @Test func itRecordsWhatItsPatternMatchesInOrder() async throws {
        let bus = EventBus()
        let recorder = try EventRecorder(bus: bus, matching: "test.>")
        for number in 1...3 { try bus.post(Ping(number: number)) }
        try bus.post(Pong(number: 9))
        let third = await recorder.first(Ping.self) { $0.number == 3 }
        #expect(third == Ping(number: 3))
        #expect(recorder.events(Ping.self).map(\.number) == [1, 2, 3])
        #expect(recorder.topics == ["test.ping", "test.ping", "test.ping"])
        #expect(recorder.events(Pong.self).isEmpty)
    }

    @Test func aCancelledRecorderKeepsWhatItHadAndRecordsNoMore() async throws {
        let bus = EventBus()
        let recorder = try EventRecorder(bus: bus)
        try bus.post(Ping(number: 1))
        #expect(await recorder.wait { $0.count == 1 })
        recorder.cancel()
        try bus.post(Ping(number: 2))
        let after = try EventRecorder(bus: bus)
        try bus.post(Ping(number: 3))
        #expect(await after.first(Ping.self) != nil)
        #expect(recorder.events(Ping.self).map(\.number) == [1])
        let second = await recorder.first(Ping.self, timeout: .milliseconds(1)) { $0.number == 2 }
        #expect(second == nil)
    }

    @Test func anUnsubscribedRecorderTakesWhatItIsHanded() async throws {
        let bus = EventBus()
        let recorder = EventRecorder()
        let token = try bus.subscribe(matching: ">") { recorder.record($0) }
        try bus.post(Ping(number: 7))
        #expect(await recorder.first(Ping.self)?.number == 7)
        token.cancel()
    }
}

@Suite struct ManualClockTests {
    @Test func aSleeperWakesOnlyWhenTimePassesItsDeadline() async throws {
        let clock = ManualClock()
        let woke = Recording<Int>()
        let sleeper = Task {
            try await clock.sleep(for: .seconds(60))
            woke.append(1)
        }
        await clock.waitForSleepers()
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(60)))
        clock.advance(by: .seconds(59))
        #expect(woke.count == 0 && clock.nextDeadline != nil)
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(woke.values == [1] && clock.now == ManualClock.Instant(offset: .seconds(60)))
        #expect(clock.sleeps == [.seconds(60)])
    }

    @Test func advancingToTheNextDeadlineWakesTheEarliestSleeper() async throws {
        let clock = ManualClock()
        let order = Recording<Int>()
        let late = Task { try await clock.sleep(for: .seconds(20)); order.append(20) }
        let early = Task { try await clock.sleep(for: .seconds(5)); order.append(5) }
        await clock.waitForSleepers(2)
        clock.advanceToNextDeadline()
        try await early.value
        #expect(order.values == [5] && clock.now.offset == .seconds(5))
        clock.advanceToNextDeadline()
        try await late.value
        #expect(order.values == [5, 20])
    }

    @Test func aCancelledSleeperThrows() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.nextDeadline == nil)
    }

    @Test func aClockThatAdvancesOnSleepReturnsAtOnceAndListsTheSleeps() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        try await clock.sleep(for: .seconds(2))
        try await clock.sleep(for: .milliseconds(500))
        #expect(clock.sleeps == [.seconds(2), .milliseconds(500)])
        #expect(clock.now.offset == .milliseconds(2_500))
    }
}
