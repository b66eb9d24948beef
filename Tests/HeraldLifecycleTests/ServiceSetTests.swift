import Testing
@testable import HeraldLifecycle
import HeraldTesting

/// A ``ServiceSet`` in a group: members added and removed while it runs, stopped in reverse at
/// the end, a member's failure failing the group.
@Suite struct ServiceSetTests {
    @Test(.timeLimit(.minutes(5)))
    func membersAddedAndRemovedWhileRunningStopInReverseAtTheEnd() async throws {
        let log = Recording<String>()
        let set = ServiceSet([.init("a", RecordingService(name: "a", log: log))])
        let group = ServiceGroup([.init("set", set)], clock: ContinuousClock())
        let run = Task { try await group.run() }
        await log.wait(until: { $0.contains("ready a") })
        try await set.add(.init("b", RecordingService(name: "b", log: log)))
        try await set.add(.init("c", RecordingService(name: "c", log: log)))
        #expect(set.names == ["a", "b", "c"])
        await set.remove("b")
        #expect(log.values.last == "stop b")
        #expect(set.names == ["a", "c"])
        await #expect(throws: ServiceGroupError.self) { try await set.add(.init("a", RecordingService(name: "a2", log: log))) }
        run.cancel()
        try await run.value
        #expect(Array(log.values.suffix(2)) == ["stop c", "stop a"])
    }

    @Test(.timeLimit(.minutes(5)))
    func aMemberThatFailsToStartIsNotAddedAndTheSetRunsOn() async throws {
        let log = Recording<String>()
        let set = ServiceSet()
        let group = ServiceGroup([.init("set", set)], clock: ContinuousClock())
        let run = Task { try await group.run() }
        try await set.add(.init("a", RecordingService(name: "a", log: log)))
        await #expect(throws: ServiceGroupError.self) {
            try await set.add(.init("broken", FailingService(name: "broken", log: log, announces: false)))
        }
        #expect(set.names == ["a"])
        run.cancel()
        try await run.value
        #expect(log.values.last == "stop a")
    }

    @Test(.timeLimit(.minutes(5)))
    func aMemberFailingWhileRunningFailsTheGroupNamingIt() async throws {
        let log = Recording<String>()
        let set = ServiceSet([.init("a", RecordingService(name: "a", log: log))])
        let group = ServiceGroup([.init("set", set)], clock: ContinuousClock())
        let run = Task { try await group.run() }
        await log.wait(until: { $0.contains("ready a") })
        try await set.add(.init("late", FailingService(name: "late", log: log)))
        let error = await #expect(throws: ServiceGroupError.self) { try await run.value }
        #expect(error?.service == "late", "the group names the member of the set that failed")
        #expect(log.values.contains("stop a"))
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingTheSetCancelsItsMembers() async throws {
        let log = Recording<String>()
        let set = ServiceSet([.init("a", RecordingService(name: "a", log: log))])
        let run = Task { try await set.run() }
        await log.wait(until: { $0.contains("ready a") })
        try await set.add(.init("b", RecordingService(name: "b", log: log)))
        run.cancel()
        try await run.value
        #expect(log.values.contains("stop a (cancelled)"), "\(log.values)")
        #expect(log.values.contains("stop b (cancelled)"), "\(log.values)")
    }
}
