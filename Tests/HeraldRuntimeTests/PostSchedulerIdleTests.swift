import Foundation
import Herald
import HeraldServices
@testable import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing

/// A post service that holds each call until the test answers it.
private final class AnsweredPostService: PostService {
    private struct State {
        var calls = 0
        var held: [CheckedContinuation<Void, Never>] = []
        var callWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = SyncLock(State())

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.calls += 1
                state.held.append(continuation)
                let calls = state.calls
                let ready = state.callWaiters.filter { $0.count <= calls }.map(\.continuation)
                state.callWaiters.removeAll { $0.count <= calls }
                return ready
            }
            ready.forEach { $0.resume() }
        }
        return "post-\(intent.key)"
    }

    /// Returns once the service was called `count` times.
    func waitUntilCalled(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.calls >= count { return true }
                state.callWaiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Answers the calls waiting now.
    func answer() {
        state.withLock { state in
            defer { state.held = [] }
            return state.held
        }.forEach { $0.resume() }
    }
}

/// ``PostScheduler/waitUntilIdle()``, which `herald replay --post` awaits instead of polling.
@Suite(.timeLimit(.minutes(5)))
struct PostSchedulerIdleTests {
    @Test func theWaitEndsOnceEveryPostIsDoneWithItsOutcomePublished() async throws {
        try await PostHarness.run { harness in
            let service = AnsweredPostService()
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            // Nothing waits: at once.
            await scheduler.waitUntilIdle()

            try await harness.announce(PostHarness.todos(["one", "two"]))
            await service.waitUntilCalled(1)
            let idle = Task { () -> (sent: Int, waiting: Int) in
                await scheduler.waitUntilIdle()
                return (harness.recorder.events(PostSent.self).count, scheduler.snapshot.waiting.count)
            }
            // One rule, one worker: the second post is sent after the first.
            service.answer()
            await service.waitUntilCalled(2)
            service.answer()
            let seen = await idle.value
            #expect(seen.sent == 2 && seen.waiting == 0, "\(seen)")
            try await running.stop().get()
        }
    }

    @Test func aCancelledWaitEnds() async throws {
        try await PostHarness.run { harness in
            let service = AnsweredPostService()
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["one"]))
            await service.waitUntilCalled(1)
            let idle = Task { await scheduler.waitUntilIdle() }
            idle.cancel()
            await idle.value
            #expect(scheduler.snapshot.waiting.count == 1)
            service.answer()
            try await running.stop().get()
        }
    }
}
