import Herald
import Testing

@Suite struct StatsTests {
    @Test func statsCountPerTopicAndPerSubscription() async throws {
        let bus = EventBus()
        let tokens = [
            try bus.subscribe(to: Tick.self, name: "inline") { _ in },
            try bus.subscribe(matching: "loader.>", name: "loaders") { envelope in
                if envelope.topic == "loader.home.failed" { throw Boom() }
            },
        ]
        let queued = try bus.events(of: Tick.self, name: "queued", capacity: 4, overflow: .dropNewest)
        for number in 0...6 { try bus.post(Tick(number: number)) }
        try bus.post(LoadFinished(loader: "home", count: 1))
        try bus.post(LoadFailed(loader: "home", reason: "x"))

        var stats = bus.stats()
        // 9 posted here, plus one drop report and one failure report.
        #expect(stats.published == 11)
        #expect(stats.topics[EventsDropped.topic]?.published == 1)
        #expect(stats.topics[SubscriberFailed.topic]?.published == 1)
        #expect(stats.subscription(named: "queued")?.queueDepth == 4)
        #expect(stats.subscription(named: "queued")?.highWaterMark == 4)
        #expect(stats.subscription(named: "queued")?.dropped == 3)
        #expect(stats.subscription(named: "queued")?.delivery == "queued(capacity: 4, overflow: dropNewest)")
        var iterator = queued.makeAsyncIterator()
        for _ in 0..<4 { _ = await iterator.next() }
        #expect(bus.stats().subscription(named: "queued")?.delivered == 4)

        stats = bus.stats()
        #expect(stats.topics[Tick.topic] == TopicStatistics(published: 7, delivered: 7 + 4, dropped: 3, failed: 0))
        #expect(stats.topics["loader.home.finished"] == TopicStatistics(published: 1, delivered: 1, dropped: 0, failed: 0))
        #expect(stats.topics["loader.home.failed"] == TopicStatistics(published: 1, delivered: 0, dropped: 0, failed: 1))
        let inline = try #require(stats.subscription(named: "inline"))
        #expect(inline.delivered == 7)
        #expect(inline.queueDepth == 0)
        #expect(inline.eventType == "Tick")
        let loaders = try #require(stats.subscription(named: "loaders"))
        #expect(loaders.pattern == "loader.>")
        #expect(loaders.delivered == 1)
        #expect(loaders.failed == 1)
        #expect(stats.subscription(named: "queued")?.queueDepth == 0)
        withExtendedLifetime(tokens) {}
    }
}

