import Herald
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

/// Many publishers and subscribers on several tasks. Each subscriber checks, per publisher, that
/// numbers arrive exactly once and in order. Run under the thread sanitizer by `.ci/run`
/// (`swift test --sanitize=thread --filter StressTests`).
@Suite struct StressTests {
    final class OrderChecker: Sendable {
        private struct State {
            var next: [Int: Int] = [:]
            var errors: [String] = []
            var total = 0
        }
        private let state = Locked(State())
        let done = Recording<Int>()
        let expected: Int

        init(expected: Int) { self.expected = expected }

        func receive(_ tick: Tick) {
            let total = state.withLock { s -> Int in
                let want = s.next[tick.publisher, default: 0]
                if tick.number != want, s.errors.count < 5 {
                    s.errors.append("publisher \(tick.publisher): got \(tick.number), expected \(want)")
                }
                s.next[tick.publisher] = tick.number + 1
                s.total += 1
                return s.total
            }
            if total == expected { done.append(total) }
        }

        var errors: [String] { state.withLock { $0.errors } }
        var total: Int { state.withLock { $0.total } }
    }

    @Test(arguments: [OverflowPolicy.wait])
    func manyPublishersAndSubscribersLoseDuplicateAndReorderNothing(policy: OverflowPolicy) async throws {
        let bus = EventBus()
        let publishers = 4, perPublisher = 5_000
        let total = publishers * perPublisher
        var checkers: [OrderChecker] = []
        var tokens: [Subscription] = []
        for index in 0..<6 {
            let checker = OrderChecker(expected: total)
            checkers.append(checker)
            let delivery: Delivery = index % 3 == 0 ? .inline : .queued(capacity: 64, overflow: policy)
            tokens.append(try bus.subscribe(to: Tick.self, delivery: delivery) { checker.receive($0) })
        }
        let streamChecker = OrderChecker(expected: total)
        let stream = try bus.events(of: Tick.self, capacity: 32)
        let reader = Task {
            for await tick in stream {
                streamChecker.receive(tick)
                if streamChecker.total == total { break }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for publisher in 0..<publishers {
                group.addTask {
                    for number in 0..<perPublisher {
                        if number % 2 == 0 {
                            try await bus.publish(Tick(publisher: publisher, number: number))
                        } else {
                            try bus.post(Tick(publisher: publisher, number: number))
                        }
                    }
                }
            }
            // Churn: subscriptions come and go while the others receive.
            group.addTask {
                for _ in 0..<200 {
                    let token = try bus.subscribe(matching: "test.>", delivery: .queued(capacity: 2, overflow: .dropOldest)) { _ in }
                    token.cancel()
                }
            }
            try await group.waitForAll()
        }
        for checker in checkers + [streamChecker] {
            #expect(await checker.done.wait(forCount: 1), "received \(checker.total) of \(total)")
            #expect(checker.errors == [])
            #expect(checker.total == total)
        }
        await reader.value
        #expect(bus.stats().topics[Tick.topic]?.published == UInt64(total))
        withExtendedLifetime(tokens) {}
    }
}
