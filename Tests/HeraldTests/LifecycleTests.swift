import Herald
import Testing
import HeraldSync

@Suite struct LifecycleTests {
    @Test func subscriptionIsLiveWhenSubscribeReturns() async throws {
        // Subscribe and publish at once from many tasks: each subscription must see every event
        // published after its subscribe returned.
        let bus = EventBus()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let received = Recording<Int>()
                    let token = try bus.subscribe(to: Tick.self, on: "test.tick") { received.append($0.number) }
                    let marker = Int.random(in: 1_000...1_000_000_000)
                    try bus.post(Tick(number: marker))
                    defer { withExtendedLifetime(token) {} }
                    return received.values.contains(marker)
                }
            }
            for try await seen in group { #expect(seen) }
        }
    }

    @Test func cancelEndsTheSubscription() throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self) { received.append($0.number) }
        try bus.post(Tick(number: 1))
        token.cancel()
        token.cancel()
        #expect(!token.isActive)
        try bus.post(Tick(number: 2))
        #expect(received.values == [1])
        #expect(bus.stats().subscriptions.isEmpty)
    }

    @Test func releasingTheTokenEndsTheSubscription() throws {
        let bus = EventBus()
        let received = Recording<Int>()
        var token: Subscription? = try bus.subscribe(to: Tick.self) { received.append($0.number) }
        try bus.post(Tick(number: 1))
        #expect(token != nil)
        token = nil
        try bus.post(Tick(number: 2))
        #expect(received.values == [1])
    }

    final class Observer: Sendable {
        let received = Recording<Int>()
        func handle(_ tick: Tick) { received.append(tick.number) }
    }

    @Test func subscriberObjectIsFreedAfterItsTokenGoes() throws {
        let bus = EventBus()
        weak var weakObserver: Observer?
        var token: Subscription?
        do {
            let observer = Observer()
            weakObserver = observer
            token = try bus.subscribe(to: Tick.self) { observer.handle($0) }
            try bus.post(Tick(number: 1))
            #expect(observer.received.values == [1])
        }
        #expect(weakObserver != nil, "the live subscription keeps its handler (and what it captures)")
        #expect(token?.isActive == true)
        token = nil
        #expect(weakObserver == nil, "the bus lets go of the handler with the token")
    }

    final class SelfSubscribing: Sendable {
        let received = Recording<Int>()
        let subscription = SyncLock<Subscription?>(nil)
    }

    @Test func weakObserverHoldingItsOwnTokenMakesNoCycle() throws {
        let bus = EventBus()
        weak var weakObserver: SelfSubscribing?
        do {
            let observer = SelfSubscribing()
            weakObserver = observer
            let token = try bus.subscribe(to: Tick.self, observer: observer) { observer, tick in
                observer.received.append(tick.number)
            }
            observer.subscription.withLock { $0 = token }
            try bus.post(Tick(number: 1))
            #expect(observer.received.values == [1])
        }
        #expect(weakObserver == nil)
        #expect(bus.stats().subscriptions.isEmpty)
    }

    @Test func weakObserverSubscriptionEndsItselfWhenTheObserverDies() throws {
        let bus = EventBus()
        var token: Subscription?
        do {
            let observer = Observer()
            token = try bus.subscribe(to: Tick.self, observer: observer) { observer, tick in observer.handle(tick) }
        }
        #expect(bus.stats().subscriptions.count == 1)
        try bus.post(Tick(number: 1))
        #expect(bus.stats().subscriptions.isEmpty)
        #expect(token?.isActive == false)
    }

    @Test func cancellingTheIteratingTaskEndsAStreamSubscription() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, name: "reader")
        let started = Recording<Int>()
        let reader = Task {
            var count = 0
            for await _ in stream {
                count += 1
                started.append(count)
            }
            return count
        }
        try bus.post(Tick(number: 1))
        #expect(await started.wait(forCount: 1))
        reader.cancel()
        #expect(await reader.value == 1)
        #expect(!stream.subscription.isActive)
        #expect(bus.stats().subscription(named: "reader") == nil)
    }

    @Test func cancelDiscardsWhatIsWaiting() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self)
        for number in 1...5 { try bus.post(Tick(number: number)) }
        stream.subscription.cancel()
        try bus.post(Tick(number: 6))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    /// Announces its release, so a test awaits it instead of polling a weak reference.
    final class Captured: Sendable {
        let freed: Recording<Void>
        init(freed: Recording<Void>) { self.freed = freed }
        deinit { freed.append(()) }
    }

    @Test func cancelledQueuedSubscriptionStopsItsTaskAndLetsGoOfItsHandler() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let freed = Recording<Void>()
        let token: Subscription
        do {
            let captured = Captured(freed: freed)
            token = try bus.subscribe(to: Tick.self, delivery: .queued()) { tick in
                withExtendedLifetime(captured) { received.append(tick.number) }
            }
        }
        try bus.post(Tick(number: 1))
        #expect(await received.wait(forCount: 1))
        token.cancel()
        try bus.post(Tick(number: 2))
        // The handler (and what it captures) is only freed once the subscription's task ended.
        #expect(await freed.wait(forCount: 1))
        #expect(received.values == [1])
    }

    @Test func subscriptionCancelledDuringAPublishIsFreedWhenThatPublishEnds() throws {
        // A publish walks its route without retaining it; a cancel meanwhile must keep that route
        // (and the handlers it reaches) alive until the publish ends, then let go.
        let bus = EventBus()
        let freed = Recording<Void>()
        let victim = SyncLock<Subscription?>(nil)
        let seenInside = Recording<Int>()
        let canceller = try bus.subscribe(to: Tick.self) { _ in
            victim.withLock { $0 = nil }
            seenInside.append(freed.count)
        }
        do {
            let captured = Captured(freed: freed)
            let token = try bus.subscribe(to: Tick.self) { _ in withExtendedLifetime(captured) {} }
            victim.withLock { $0 = token }
        }
        try bus.post(Tick(number: 1))
        #expect(seenInside.values == [0], "freed while the publish that reaches it was running")
        #expect(freed.count == 1, "still held once the publish ended")
        #expect(bus.stats().subscriptions.count == 1)
        withExtendedLifetime(canceller) {}
    }

    @Test func breakingOutOfAStreamLeavesTheRestWaiting() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, name: "reader")
        for number in 1...5 { try bus.post(Tick(number: number)) }
        for await tick in stream where tick.number == 2 { break }
        try bus.post(Tick(number: 6))
        var rest: [Int] = []
        for await tick in stream {
            rest.append(tick.number)
            if tick.number == 6 { break }
        }
        #expect(rest == [3, 4, 5, 6])
        #expect(bus.stats().subscription(named: "reader")?.delivered == 6)
    }

    @Test(.timeLimit(.minutes(5)))
    func twoIteratorsShareAStreamAndBothEndWhenCancelled() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self)
        let seen = Recording<Int>()
        let readers = (0..<2).map { _ in
            Task {
                for await tick in stream { seen.append(tick.number) }
            }
        }
        for number in 0..<20 { try bus.post(Tick(number: number)) }
        #expect(await seen.wait(forCount: 20))
        #expect(seen.values.sorted() == Array(0..<20), "each event goes to exactly one iterator")
        for reader in readers { reader.cancel() }
        for reader in readers { await reader.value }
    }

}

import HeraldTesting
import Synchronization
