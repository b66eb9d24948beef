import Herald
import Testing
import HeraldTesting

@Suite struct OrderingTests {
    @Test func publishingFromAHandlerNeitherDeadlocksNorReorders() throws {
        let bus = EventBus()
        let seenByFirst = Recording<String>(), seenBySecond = Recording<String>()
        let tokens = [
            try bus.subscribe(matching: "doc.>") { envelope in
                seenByFirst.append(envelope.topic.name)
                if envelope.topic == "doc.opened" {
                    // Causes a second event while the first is still being delivered.
                    try bus.post(Note(topic: "doc.indexed"))
                }
            },
            try bus.subscribe(matching: "doc.>") { envelope in seenBySecond.append(envelope.topic.name) },
        ]
        try bus.post(Note(topic: "doc.opened"))
        #expect(seenByFirst.values == ["doc.opened", "doc.indexed"])
        #expect(seenBySecond.values == ["doc.opened", "doc.indexed"], "the cause reaches every subscriber first")
        withExtendedLifetime(tokens) {}
    }

    @Test func nestedPublishesOfSeveralLevelsStayBreadthFirst() throws {
        let bus = EventBus()
        let log = Recording<String>()
        let tokens = [
            try bus.subscribe(to: Tick.self, name: "a") { tick in
                log.append("a\(tick.number)")
                if tick.number < 3 { try bus.post(Tick(number: tick.number + 1)) }
            },
            try bus.subscribe(to: Tick.self, name: "b") { tick in log.append("b\(tick.number)") },
        ]
        try bus.post(Tick(number: 1))
        #expect(log.values == ["a1", "b1", "a2", "b2", "a3", "b3"])
        withExtendedLifetime(tokens) {}
    }

    @Test func queuedHandlerMayPublishIntoItsOwnFullMailbox() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self, delivery: .queued(capacity: 1, overflow: .wait)) { tick in
            received.append(tick.number)
            if tick.number < 50 { try bus.post(Tick(number: tick.number + 1)) }
        }
        try await bus.publish(Tick(number: 0))
        #expect(await received.wait(forCount: 51))
        #expect(received.values == Array(0...50))
        withExtendedLifetime(token) {}
    }

    @Test func inlineSubscribersAreCalledInSubscriptionOrder() throws {
        let bus = EventBus()
        let log = Recording<Int>()
        var tokens: [Subscription] = []
        for index in 0..<5 {
            tokens.append(try bus.subscribe(to: Tick.self) { _ in log.append(index) })
        }
        try bus.post(Tick(number: 0))
        #expect(log.values == [0, 1, 2, 3, 4])
        withExtendedLifetime(tokens) {}
    }
    @Test func nestedPublishWaitsForItsCauseEvenWhenAWaitMailboxIsFull() async throws {
        let bus = EventBus()
        let third = Recording<String>()
        let cause = try bus.subscribe(matching: "doc.opened") { _ in try bus.post(Note(topic: "doc.indexed")) }
        let full = try bus.envelopes(matching: "doc.>", name: "full", capacity: 1, overflow: .wait)
        let later = try bus.subscribe(matching: "doc.>") { third.append($0.topic.name) }
        try bus.post(Note(topic: "doc.first"))                 // fills `full`
        let publisher = Task { try await bus.publish(Note(topic: "doc.opened")) }
        var iterator = full.makeAsyncIterator()
        var seen: [String] = []
        for _ in 0..<3 { seen.append(try #require(await iterator.next()).topic.name) }
        _ = try await publisher.value
        #expect(seen == ["doc.first", "doc.opened", "doc.indexed"])
        #expect(third.values == ["doc.first", "doc.opened", "doc.indexed"])
        withExtendedLifetime((cause, later)) {}
    }

    @Test func aTaskStartedInAHandlerPublishesOnItsOwn() async throws {
        let bus = EventBus()
        let effects = Recording<Int>()
        let ranBeforeReturn = Recording<Bool>()
        let tokens = [
            try bus.subscribe(matching: "doc.opened") { _ in
                Task {
                    _ = try bus.post(Note(topic: "doc.task"))
                    ranBeforeReturn.append(effects.count == 1)
                }
            },
            try bus.subscribe(matching: "doc.>") { _ in },
            try bus.subscribe(matching: "doc.task") { _ in effects.append(1) },
        ]
        try bus.post(Note(topic: "doc.opened"))
        #expect(await ranBeforeReturn.wait(forCount: 1))
        #expect(ranBeforeReturn.values == [true], "post from the task delivered inline before returning")
        withExtendedLifetime(tokens) {}
    }

    @Test func nestedPublishesAcrossTwoBusesKeepEachBusInOrder() throws {
        let first = EventBus(), second = EventBus()
        let seen = Recording<String>()
        let tokens = [
            try first.subscribe(matching: "doc.opened") { _ in try second.post(Note(topic: "mirror.opened")) },
            try first.subscribe(matching: "doc.>") { seen.append($0.topic.name) },
            try second.subscribe(matching: "mirror.opened") { _ in try first.post(Note(topic: "doc.mirrored")) },
            try second.subscribe(matching: "mirror.>") { _ in },
        ]
        try first.post(Note(topic: "doc.opened"))
        #expect(seen.values == ["doc.opened", "doc.mirrored"])
        withExtendedLifetime(tokens) {}
    }

}
