import Herald
import Testing
import HeraldTesting

@Suite struct BatchDeliveryTests {
    /// Posts `count` retained notes on distinct topics: a subscription made afterwards finds them
    /// all in its mailbox before its task takes the first batch.
    static func postRetained(_ count: Int, on bus: EventBus) throws {
        for index in 0..<count {
            try bus.post(Note(topic: try Topic(validating: "test.batch.n\(index)"), text: "\(index)"), retain: .untilReplaced)
        }
    }

    @Test func waitingEventsArriveTogetherInOneBatchInOrder() async throws {
        let bus = EventBus()
        try Self.postRetained(50, on: bus)
        let batches = Recording<[String]>()
        let token = try bus.subscribeInBatches(matching: "test.batch.>", capacity: 8) { batch in
            batches.append(batch.map { ($0.event as? Note)?.text ?? "?" })
        }
        #expect(await batches.wait(forCount: 1))
        #expect(batches.values.first == (0..<50).map { "\($0)" }, "retained events beyond the capacity come as one batch")

        // Live events follow, in order, whatever the batches' sizes.
        for index in 50..<300 { try await bus.publish(Note(topic: "test.batch.live", text: "\(index)")) }
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(batches.values.flatMap { $0 } == (0..<300).map { "\($0)" })
        #expect(bus.stats().subscription(named: token.name)?.delivered == 300)
        withExtendedLifetime(token) {}
    }

    @Test func batchIndicesNameTheEventsAFailureReports() async throws {
        let bus = EventBus()
        try Self.postRetained(6, on: bus)
        let failures = Recording<SubscriberFailed>()
        let failed = try bus.subscribe(to: SubscriberFailed.self) { failures.append($0) }
        let token = try bus.subscribeInBatches(matching: "test.batch.>", name: "partial") { batch in
            // Fail the events with odd texts, named by their indices in the batch.
            let odd = batch.indices.filter { (Int((batch[$0].event as? Note)?.text ?? "") ?? 0) % 2 == 1 }
            throw EventBatchFailures(odd.map { ($0, Boom()) } + [(batch.endIndex, Boom())])
        }
        #expect(await failures.wait(forCount: 3))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(failures.values.map(\.eventTopic.name) == ["test.batch.n1", "test.batch.n3", "test.batch.n5"])
        #expect(failures.values.allSatisfy { $0.subscription == "partial" && $0.error == "boom" })
        let stats = try #require(bus.stats().subscription(named: "partial"))
        #expect(stats.delivered == 3, "the events not named count as delivered")
        #expect(stats.failed == 3, "an index outside the batch is ignored")
        withExtendedLifetime((token, failed)) {}
    }

    @Test func afterDropsABatchStillStartsAtZeroAndItsIndicesNameTheRightEvents() async throws {
        let bus = EventBus()
        let failures = Recording<SubscriberFailed>()
        let failed = try bus.subscribe(to: SubscriberFailed.self) { failures.append($0) }
        let firsts = Recording<String>()
        let token = try bus.subscribeInBatches(matching: "test.batch.>", name: "lossy", capacity: 2, overflow: .dropOldest) { batch in
            // Each batch's first event fails, named by index 0.
            #expect(batch.startIndex == 0)
            firsts.append(batch[0].event is Note ? (batch[0].event as! Note).text : "?")
            throw EventBatchFailures([(0, Boom())])
        }
        // Synchronous posts outrun the consumer: the mailbox of 2 drops its oldest.
        for index in 0..<2_000 { try bus.post(Note(topic: try Topic(validating: "test.batch.burst.n\(index)"), text: "\(index)")) }
        _ = await bus.shutdown(timeout: .seconds(3_600))
        let stats = try #require(bus.stats().subscription(named: "lossy"))
        #expect(stats.dropped > 0, "the burst overflowed the mailbox")
        #expect(firsts.values.count == Int(stats.failed))
        // The failure reported for each batch is its first event's (each event has its own topic).
        #expect(failures.values.filter { $0.subscription == "lossy" }.map(\.eventTopic.name) == firsts.values.map { "test.batch.burst.n\($0)" })
        withExtendedLifetime((token, failed)) {}
    }

    @Test func anyOtherErrorFailsEveryEventOfTheBatch() async throws {
        let bus = EventBus()
        try Self.postRetained(4, on: bus)
        let failures = Recording<SubscriberFailed>()
        let failed = try bus.subscribe(to: SubscriberFailed.self) { failures.append($0) }
        let token = try bus.subscribeInBatches(matching: "test.batch.>", name: "thrower") { _ in throw Boom() }
        #expect(await failures.wait(forCount: 4))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(failures.values.map(\.eventTopic.name) == (0..<4).map { "test.batch.n\($0)" })
        #expect(bus.stats().subscription(named: "thrower")?.failed == 4)
        #expect(bus.stats().subscription(named: "thrower")?.delivered == 0)
        withExtendedLifetime((token, failed)) {}
    }

    @Test func aCancelledBatchSubscriptionReceivesNothingMore() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribeInBatches(matching: "test.batch.>") { batch in
            for _ in batch { received.append(1) }
        }
        try bus.post(Note(topic: "test.batch.one"))
        #expect(await received.wait(forCount: 1))
        token.cancel()
        try bus.post(Note(topic: "test.batch.two"))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(received.count == 1)
    }

    @Test func anInvalidCapacityIsRefused() {
        let bus = EventBus()
        #expect(throws: EventBusError.self) { try bus.subscribeInBatches(matching: ">", capacity: 0) { _ in } }
    }
}
