import Herald
import Testing
import HeraldTesting

@Suite struct FailureTests {
    @Test func throwingSubscriberBecomesAnEventAndOthersStillReceive() throws {
        let bus = EventBus()
        let failures = Recording<SubscriberFailed>()
        let before = Recording<Int>(), after = Recording<Int>()
        let tokens = [
            try bus.subscribe(to: SubscriberFailed.self) { failures.append($0) },
            try bus.subscribe(to: Tick.self) { before.append($0.number) },
            try bus.subscribe(to: Tick.self, name: "thrower") { _ in throw Boom() },
            try bus.subscribe(to: Tick.self) { after.append($0.number) },
        ]
        try bus.post(Tick(number: 1))
        try bus.post(Tick(number: 2))
        #expect(before.values == [1, 2])
        #expect(after.values == [1, 2])
        #expect(failures.values == [
            SubscriberFailed(subscription: "thrower", subscriptionID: 3, eventTopic: Tick.topic, eventSequence: 1, error: "boom"),
            SubscriberFailed(subscription: "thrower", subscriptionID: 3, eventTopic: Tick.topic, eventSequence: 3, error: "boom"),
        ])
        #expect(bus.stats().subscription(named: "thrower")?.failed == 2)
        #expect(bus.stats().topics[Tick.topic]?.failed == 2)
        withExtendedLifetime(tokens) {}
    }

    @Test func throwingQueuedSubscriberKeepsGoing() async throws {
        let bus = EventBus()
        let failures = Recording<SubscriberFailed>()
        let received = Recording<Int>()
        let tokens = [
            try bus.subscribe(to: SubscriberFailed.self) { failures.append($0) },
            try bus.subscribe(to: Tick.self, name: "odd-hater", delivery: .queued()) { tick in
                if tick.number % 2 == 1 { throw Boom() }
                received.append(tick.number)
            },
        ]
        for number in 0..<6 { try bus.post(Tick(number: number)) }
        #expect(await received.wait(forCount: 3))
        #expect(await failures.wait(forCount: 3))
        #expect(received.values == [0, 2, 4])
        #expect(failures.values.map(\.subscription) == ["odd-hater", "odd-hater", "odd-hater"])
        withExtendedLifetime(tokens) {}
    }

    @Test func aFailingFailureHandlerDoesNotLoop() throws {
        let bus = EventBus()
        let calls = Recording<Int>()
        let tokens = [
            try bus.subscribe(to: SubscriberFailed.self, name: "bad-reporter") { _ in
                calls.append(1)
                throw Boom()
            },
            try bus.subscribe(to: Tick.self) { _ in throw Boom() },
        ]
        try bus.post(Tick(number: 1))
        #expect(calls.count == 1)
        #expect(bus.stats().subscription(named: "bad-reporter")?.failed == 1)
        withExtendedLifetime(tokens) {}
    }

    @Test func deadLettersAreOptIn() throws {
        let quiet = EventBus()
        let letters = Recording<DeadLetter>()
        let quietToken = try quiet.subscribe(to: DeadLetter.self) { letters.append($0) }
        try quiet.post(Tick(number: 1))
        #expect(letters.count == 0)

        let bus = EventBus(configuration: .init(deadLetters: true))
        let token = try bus.subscribe(to: DeadLetter.self) { letters.append($0) }
        let id = try bus.post(Tick(number: 9), from: "nobody-listens")
        let letter = try #require(letters.values.first)
        #expect(letter.eventTopic == Tick.topic)
        #expect(letter.eventID == id)
        #expect(letter.sender == "nobody-listens")
        #expect(letter.eventType.hasSuffix("Tick"))
        #expect(letter.json.contains("\"number\":9"))
        withExtendedLifetime((quietToken, token)) {}
    }
    @Test func aFailingReporterAndAnOverflowingMailboxDoNotFeedEachOther() async throws {
        let bus = EventBus()
        // Overflows on everything, the bus's own reports included…
        let everything = try bus.envelopes(matching: ">", name: "everything", capacity: 1, overflow: .dropNewest)
        // …while another subscriber throws on every report it sees.
        let thrower = try bus.subscribe(matching: "bus.>", name: "thrower") { _ in throw Boom() }
        for number in 1...5 { try bus.post(Tick(number: number)) }
        var iterator = everything.makeAsyncIterator()
        var taken = 0
        while bus.stats().subscription(named: "everything")?.queueDepth ?? 0 > 0, taken < 100 {
            _ = await iterator.next()
            taken += 1
        }
        let stats = bus.stats()
        #expect(taken < 10, "the mailbox empties: reports do not keep refilling it")
        #expect(stats.published < 10)
        #expect(stats.topics[SubscriberFailed.topic] == nil, "failures on the bus's own events are not reported")
        #expect(stats.subscription(named: "thrower")?.failed ?? 0 >= 1)
        withExtendedLifetime(thrower) {}
    }

}
