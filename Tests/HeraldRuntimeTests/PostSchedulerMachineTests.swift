@testable import HeraldSubscribers
import Testing

/// The post scheduler's lifecycle, decided by its state machine alone: no bus, no outbox, no
/// task (the machine is generic over what it holds; here plain strings and numbers).
@Suite struct PostSchedulerMachineTests {
    typealias Machine = PostSchedulerMachine<String, Int, String>

    /// A machine running on bus `bus` with queues `tweet` (1) and `toot` (2).
    static func running() -> Machine {
        var machine = Machine()
        #expect(machine.run() == .start)
        machine.started(bus: "bus", queues: ["tweet": 1, "toot": 2])
        return machine
    }

    @Test func anIdleMachineStartsAndSendsNothingBeforeItRuns() {
        var machine = Machine()
        #expect(machine.bus == nil)
        guard case .notRunning = machine.enqueue(rule: "tweet") else {
            Issue.record("an idle scheduler has no queue")
            return
        }
        #expect(machine.run() == .start)
        guard case .notRunning = machine.enqueue(rule: "tweet") else {
            Issue.record("a starting scheduler has no queue yet")
            return
        }
        #expect(machine.bus == nil, "nothing is published while the outbox is read")
    }

    @Test func aRunningMachineRoutesIntentsToTheirRulesQueues() {
        let machine = Self.running()
        #expect(machine.bus == "bus")
        guard case .enqueue(let queue) = machine.enqueue(rule: "toot") else {
            Issue.record("a running scheduler enqueues an intent of its rule")
            return
        }
        #expect(queue == 2)
        guard case .unknownRule = machine.enqueue(rule: "gone") else {
            Issue.record("an intent of a rule no longer configured is reported")
            return
        }
    }

    @Test func aSecondRunIsRefusedWhileRunningAndAfterwards() {
        var machine = Machine()
        #expect(machine.run() == .start)
        #expect(machine.run() == .refuse(.running), "while the outbox is read")
        machine.started(bus: "bus", queues: [:])
        #expect(machine.run() == .refuse(.running), "while running")
        _ = machine.stop()
        #expect(machine.run() == .refuse(.running), "while stopping")
        machine.finished()
        #expect(machine.run() == .refuse(.finished), "a scheduler runs once")
        #expect(machine.bus == nil)
    }

    @Test func stoppingEndsTheSubscriptionsAndQueuesOnceAndNothingIsEnqueuedAfter() {
        var machine = Self.running()
        #expect(isKeep(machine.subscribed(["sub.tweet", "sub.toot"])))
        guard case .end(let subscriptions, let queues) = machine.stop() else {
            Issue.record("a running scheduler ends what it holds")
            return
        }
        #expect(subscriptions == ["sub.tweet", "sub.toot"])
        #expect(queues.sorted() == [1, 2])
        guard case .none = machine.stop() else {
            Issue.record("a second stop has nothing to end")
            return
        }
        guard case .notRunning = machine.enqueue(rule: "tweet") else {
            Issue.record("an intent accepted as it stops stays in the journal for the next run")
            return
        }
        #expect(machine.bus == nil, "no outcome is published once it stops")
    }

    @Test func subscriptionsMadeAfterAStopAreCancelledAtOnce() {
        var machine = Self.running()
        _ = machine.stop()
        guard case .cancel(let late) = machine.subscribed(["sub.tweet"]) else {
            Issue.record("subscriptions made after the stop must not stay")
            return
        }
        #expect(late == ["sub.tweet"])
    }

    @Test func aStopWhileTheOutboxIsReadLeavesNothingToEnd() {
        var machine = Machine()
        #expect(machine.run() == .start)
        guard case .none = machine.stop() else {
            Issue.record("nothing runs yet")
            return
        }
        machine.started(bus: "bus", queues: ["tweet": 1])
        #expect(machine.bus == nil, "a scheduler stopped while starting does not start")
        guard case .cancel = machine.subscribed(["sub.tweet"]) else {
            Issue.record("its subscriptions are cancelled")
            return
        }
    }

    private func isKeep(_ action: Machine.SubscribedAction) -> Bool {
        if case .keep = action { true } else { false }
    }
}
