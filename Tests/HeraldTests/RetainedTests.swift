import Herald
import Testing
import HeraldTestSupport
import HeraldTesting

@Suite struct RetainedTests {
    @Test func lateSubscriberReceivesTheRetainedEventFirst() async throws {
        let bus = EventBus()
        try bus.post(LoadFinished(loader: "home", count: 1), from: "loader.home", retain: .untilReplaced)
        try bus.post(LoadFinished(loader: "home", count: 2), from: "loader.home", retain: .untilReplaced)
        try bus.post(LoadFinished(loader: "tiqav", count: 7), retain: .untilReplaced)
        try bus.post(LoadFinished(loader: "todos", count: 9))  // not retained

        let inline = Recording<Int>()
        let inlineToken = try bus.subscribe(to: LoadFinished.self) { inline.append($0.count) }
        #expect(inline.values == [2, 7], "the last retained event per topic, oldest first, before subscribe returns")

        let queued = Recording<Int>()
        let queuedToken = try bus.subscribe(to: LoadFinished.self, from: "loader.home", delivery: .queued()) { queued.append($0.count) }
        try bus.post(LoadFinished(loader: "home", count: 3), from: "loader.home")
        #expect(await queued.wait(forCount: 2))
        #expect(queued.values == [2, 3], "retained first, then live; the sender filter applies")
        #expect(bus.retainedEvent(on: "loader.home.finished")?.event(as: LoadFinished.self)?.count == 2)
        withExtendedLifetime((inlineToken, queuedToken)) {}
    }

    @Test func retainedEventExpiresAfterItsTimeToLive() throws {
        let date = ManualDate()
        let bus = EventBus(configuration: .init(clock: { date.now }))
        try bus.post(Tick(number: 1), retain: .for(.seconds(60)))
        date.advance(by: 59)
        let early = Recording<Int>()
        let earlyToken = try bus.subscribe(to: Tick.self) { early.append($0.number) }
        #expect(early.values == [1])
        date.advance(by: 2)
        let late = Recording<Int>()
        let lateToken = try bus.subscribe(to: Tick.self) { late.append($0.number) }
        #expect(late.values.isEmpty)
        #expect(bus.retainedEvent(on: Tick.topic) == nil)
        withExtendedLifetime((earlyToken, lateToken)) {}
    }

    @Test func clearingForgetsTheRetainedEvent() throws {
        let bus = EventBus()
        try bus.post(Tick(number: 1), retain: .untilReplaced)
        bus.clearRetainedEvent(on: Tick.topic)
        let received = Recording<Int>()
        let token = try bus.subscribe(matching: ">") { _ in received.append(1) }
        #expect(received.values.isEmpty)
        withExtendedLifetime(token) {}
    }
    @Test func retainedReplayComesBeforeLiveEventsForAnInlineSubscriber() throws {
        let bus = EventBus()
        try bus.post(Note(topic: "state.a", text: "a1"), from: "P", retain: .untilReplaced)
        try bus.post(Note(topic: "state.b", text: "b1"), from: "P", retain: .untilReplaced)
        let seen = Recording<String>()
        let token = try bus.subscribe(matching: "state.>", from: "P") { envelope in
            let text = (envelope.event as? Note)?.text ?? "?"
            seen.append(text)
            // P publishes a newer retained value while the subscriber is still replaying.
            if text == "a1" { try bus.post(Note(topic: "state.b", text: "b2"), from: "P", retain: .untilReplaced) }
        }
        #expect(seen.values == ["a1", "b1", "b2"], "per-publisher order, ending on the newest value")
        try bus.post(Note(topic: "state.a", text: "a2"), from: "P")
        #expect(seen.values == ["a1", "b1", "b2", "a2"])
        withExtendedLifetime(token) {}
    }

}
