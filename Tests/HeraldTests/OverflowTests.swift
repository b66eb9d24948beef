import Herald
import Testing
import HeraldTesting

/// A stream nobody reads yet is a subscriber that is as slow as we like, without blocking a thread.
@Suite struct OverflowTests {
    @Test func dropNewestKeepsTheFirstEventsAndReportsTheDrops() async throws {
        let bus = EventBus()
        let reports = Recording<EventsDropped>()
        let reportToken = try bus.subscribe(to: EventsDropped.self) { reports.append($0) }
        let stream = try bus.events(of: Tick.self, name: "slow", capacity: 3, overflow: .dropNewest)
        for number in 1...10 { try bus.post(Tick(number: number)) }
        #expect(bus.stats().subscription(named: "slow")?.queueDepth == 3)
        #expect(reports.values.map(\.count) == [1], "the first drop is reported at once")
        #expect(reports.values.first?.subscription == "slow")
        #expect(reports.values.first?.policy == .dropNewest)

        var iterator = stream.makeAsyncIterator()
        var numbers: [Int] = []
        for _ in 0..<3 { numbers.append(try #require(await iterator.next()).number) }
        #expect(numbers == [1, 2, 3])
        #expect(reports.values.map(\.count) == [1, 6], "later drops are reported together at the next batch")
        #expect(reports.values.last?.total == 7)
        let stats = bus.stats()
        #expect(stats.subscription(named: "slow")?.dropped == 7)
        #expect(stats.subscription(named: "slow")?.highWaterMark == 3)
        #expect(stats.topics[Tick.topic]?.dropped == 7)
        withExtendedLifetime(reportToken) {}
    }

    @Test func dropOldestKeepsTheNewestEvents() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, name: "slow", capacity: 3, overflow: .dropOldest)
        for number in 1...10 { try bus.post(Tick(number: number)) }
        var iterator = stream.makeAsyncIterator()
        var numbers: [Int] = []
        for _ in 0..<3 { numbers.append(try #require(await iterator.next()).number) }
        #expect(numbers == [8, 9, 10])
        #expect(bus.stats().subscription(named: "slow")?.dropped == 7)
        try bus.post(Tick(number: 11))
        #expect(await iterator.next()?.number == 11)
    }

    @Test func waitPolicyMakesAnAsyncPublisherWaitForRoom() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, name: "slow", capacity: 2, overflow: .wait)
        try await bus.publish(Tick(number: 1))
        try await bus.publish(Tick(number: 2))
        let published = Recording<Int>()
        let publisher = Task {
            try await bus.publish(Tick(number: 3))
            published.append(3)
        }
        #expect(!(await published.wait(forCount: 1, timeout: .milliseconds(300))), "the publisher waits while the mailbox is full")
        #expect(bus.stats().subscription(named: "slow")?.queueDepth == 2)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.number == 1)
        try await publisher.value
        #expect(await iterator.next()?.number == 2)
        #expect(await iterator.next()?.number == 3)
        #expect(bus.stats().subscription(named: "slow")?.dropped == 0)
    }

    @Test func slowSubscriberDoesNotDelayOthers() async throws {
        let bus = EventBus()
        let fast = Recording<Int>()
        let slow = try bus.events(of: Tick.self, name: "slow", capacity: 1, overflow: .dropNewest)
        let token = try bus.subscribe(to: Tick.self, delivery: .queued(capacity: 1_000)) { fast.append($0.number) }
        for number in 0..<500 { try await bus.publish(Tick(number: number)) }
        #expect(await fast.wait(forCount: 500))
        #expect(fast.values == Array(0..<500))
        #expect(bus.stats().subscription(named: "slow")?.dropped == 499)
        withExtendedLifetime((token, slow)) {}
    }

    @Test func synchronousPostNeverBlocksAndLosesNothingUnderWait() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, name: "slow", capacity: 2, overflow: .wait)
        for number in 1...6 { try bus.post(Tick(number: number)) }
        let stats = try #require(bus.stats().subscription(named: "slow"))
        #expect(stats.queueDepth == 6)
        #expect(stats.highWaterMark == 6)
        var numbers: [Int] = []
        for await tick in stream {
            numbers.append(tick.number)
            if numbers.count == 6 { break }
        }
        #expect(numbers == Array(1...6))
    }

    @Test func cancellingAWaitingPublisherStillDeliversItsEvent() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, capacity: 1, overflow: .wait)
        try await bus.publish(Tick(number: 1))
        let publisher = Task { try await bus.publish(Tick(number: 2)) }
        publisher.cancel()
        _ = try await publisher.value
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.number == 1)
        #expect(await iterator.next()?.number == 2)
    }

    @Test func dropsOfDropReportsAreCountedButNotReported() async throws {
        let bus = EventBus()
        // A subscriber to everything, itself overflowing: its own drop reports land in its full
        // mailbox, and must not feed more reports.
        let stream = try bus.envelopes(matching: ">", name: "all", capacity: 1, overflow: .dropNewest)
        for number in 1...5 { try bus.post(Tick(number: number)) }
        // Tick 1 waits; tick 2 is dropped and reported at once, and that report is dropped too
        // (counted, not reported); ticks 3 to 5 are dropped and reported at the next batch.
        #expect(bus.stats().subscription(named: "all")?.dropped == 5)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.event(as: Tick.self)?.number == 1)
        let report = try #require(await iterator.next()?.event(as: EventsDropped.self))
        #expect(report.count == 3)
        #expect(report.total == 5)
        #expect(bus.stats().subscription(named: "all")?.queueDepth == 0)
    }
    @Test func dropsWhileReplayingRetainedEventsAreCountedAndReported() async throws {
        let bus = EventBus()
        let reports = Recording<EventsDropped>()
        let reportToken = try bus.subscribe(to: EventsDropped.self) { reports.append($0) }
        for name in ["a", "b", "c"] { try bus.post(Note(topic: try Topic(tokens: "state", name)), retain: .untilReplaced) }
        let stream = try bus.envelopes(matching: "state.>", name: "small", capacity: 1, overflow: .dropNewest)
        let stats = bus.stats()
        #expect(stats.subscription(named: "small")?.dropped == 2)
        let topics: [Topic] = ["state.a", "state.b", "state.c"]
        #expect(topics.map { stats.topics[$0]?.dropped ?? 0 }.reduce(0, +) == 2)
        #expect(reports.values.map(\.count) == [1])
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.topic == "state.a")
        #expect(reports.values.map(\.count) == [1, 1])
        withExtendedLifetime(reportToken) {}
    }

}
