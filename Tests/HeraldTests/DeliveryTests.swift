import Foundation
import Herald
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

@Suite struct DeliveryTests {
    @Test func subscribingByTypeDeliversTheValueInlineBeforePostReturns() throws {
        let bus = EventBus()
        let received = Recording<LoadFinished>()
        let token = try bus.subscribe(to: LoadFinished.self) { received.append($0) }
        try bus.post(LoadFinished(loader: "home", count: 3))
        #expect(received.values == [LoadFinished(loader: "home", count: 3)])
        try bus.post(LoadFailed(loader: "home", reason: "x"))
        #expect(received.count == 1, "another type does not reach a type subscription")
        withExtendedLifetime(token) {}
    }

    @Test func subscribingByPatternDeliversEnvelopesWithEveryField() throws {
        let date = ManualDate()
        let bus = EventBus(configuration: .init(clock: { date.now }))
        let received = Recording<Envelope<any Event>>()
        let token = try bus.subscribe(matching: "loader.*.failed") { received.append($0) }
        let first = try bus.post(LoadFailed(loader: "home", reason: "timeout"), from: "loader.home")
        try bus.post(LoadFinished(loader: "home", count: 1), from: "loader.home")
        date.advance(by: 1)
        let second = try bus.post(LoadFailed(loader: "tiqav", reason: "503"), from: "loader.tiqav", correlation: first)

        let envelopes = received.values
        try #require(envelopes.count == 2)
        #expect(envelopes[0].topic == "loader.home.failed")
        #expect(envelopes[0].sender == "loader.home")
        #expect(envelopes[0].sequence == 1)
        #expect(envelopes[0].id == first)
        #expect(envelopes[0].id.bus == bus.id)
        #expect(envelopes[0].correlationID == first, "an event starts its own chain by default")
        #expect(envelopes[0].timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(envelopes[0].event(as: LoadFailed.self) == LoadFailed(loader: "home", reason: "timeout"))
        #expect(envelopes[1].sequence == 3, "sequence numbers are bus-wide")
        #expect(envelopes[1].id == second)
        #expect(envelopes[1].correlationID == first, "the correlation id follows the chain")
        #expect(envelopes[1].timestamp == Date(timeIntervalSince1970: 1_700_000_001))
        withExtendedLifetime(token) {}
    }

    @Test func typedEnvelopeSubscriptionGetsTheTypedEvent() throws {
        let bus = EventBus()
        let received = Recording<Envelope<LoadFinished>>()
        let token = try bus.subscribe(envelopesOf: LoadFinished.self, on: "loader.home.*") { received.append($0) }
        try bus.post(LoadFinished(loader: "home", count: 2), from: "loader.home")
        try bus.post(LoadFinished(loader: "tiqav", count: 5))
        #expect(received.values.map(\.event) == [LoadFinished(loader: "home", count: 2)])
        #expect(received.values.first?.sender == "loader.home")
        withExtendedLifetime(token) {}
    }

    @Test func senderFilterDeliversOnlyThatSendersEvents() throws {
        let bus = EventBus()
        let home = Recording<LoadFinished>()
        let any = Recording<LoadFinished>()
        let tokens = [
            try bus.subscribe(to: LoadFinished.self, from: "loader.home") { home.append($0) },
            try bus.subscribe(to: LoadFinished.self) { any.append($0) },
        ]
        try bus.post(LoadFinished(loader: "home", count: 1), from: "loader.home")
        try bus.post(LoadFinished(loader: "other", count: 2), from: "loader.other")
        try bus.post(LoadFinished(loader: "anonymous", count: 3))
        #expect(home.values.map(\.count) == [1])
        #expect(any.values.map(\.count) == [1, 2, 3])
        withExtendedLifetime(tokens) {}
    }

    @Test func senderCanBeAnObjectLikeNotificationCenter() throws {
        final class Loader: Sendable {}
        let loader = Loader(), other = Loader()
        #expect(Sender(object: loader) == Sender(object: loader))
        #expect(Sender(object: loader) != Sender(object: other))
        let bus = EventBus()
        let received = Recording<LoadFinished>()
        let token = try bus.subscribe(to: LoadFinished.self, from: Sender(object: loader)) { received.append($0) }
        try bus.post(LoadFinished(loader: "a", count: 1), from: Sender(object: other))
        try bus.post(LoadFinished(loader: "b", count: 2), from: Sender(object: loader))
        #expect(received.values.map(\.loader) == ["b"])
        withExtendedLifetime(token) {}
    }

    @Test func queuedSubscriberReceivesEveryEventInOrderOnItsOwnTask() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self, delivery: .queued(capacity: 8)) { received.append($0.number) }
        for number in 0..<500 { try await bus.publish(Tick(number: number)) }
        #expect(await received.wait(forCount: 500))
        #expect(received.values == Array(0..<500))
        withExtendedLifetime(token) {}
    }

    @Test func asyncSequenceSubscriptionReadsTheSameMailbox() async throws {
        let bus = EventBus()
        let stream = try bus.events(of: Tick.self, capacity: 4)
        let reader = Task {
            var numbers: [Int] = []
            for await tick in stream {
                numbers.append(tick.number)
                if numbers.count == 100 { break }
            }
            return numbers
        }
        for number in 0..<100 { try await bus.publish(Tick(number: number)) }
        #expect(await reader.value == Array(0..<100))
    }

    @Test func envelopeStreamByPattern() async throws {
        let bus = EventBus()
        let stream = try bus.envelopes(matching: "loader.>")
        try bus.post(LoadFinished(loader: "home", count: 1))
        try bus.post(Tick(number: 1))
        try bus.post(LoadFailed(loader: "home", reason: "x"))
        var topics: [Topic] = []
        for await envelope in stream {
            topics.append(envelope.topic)
            if topics.count == 2 { break }
        }
        #expect(topics == ["loader.home.finished", "loader.home.failed"])
    }

    @Test func mainActorDeliveryRunsOnTheMainActor() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribeOnMainActor(to: Tick.self) { tick in
            // Traps (failing the test run) unless the handler runs on the main actor.
            MainActor.assertIsolated("main-actor delivery ran off the main actor")
            MainActorLog.numbers.append(tick.number)
            received.append(tick.number)
        }
        try bus.post(Tick(number: 1))
        try bus.post(Tick(number: 2))
        #expect(await received.wait(forCount: 2))
        #expect(await MainActorLog.numbers == [1, 2])
        withExtendedLifetime(token) {}
    }

    @Test func queuedEnvelopeAndPatternSubscriptions() async throws {
        let bus = EventBus()
        let typed = Recording<UInt64>()
        let any = Recording<Topic>()
        let tokens = [
            try bus.subscribe(envelopesOf: Tick.self, delivery: .queued()) { typed.append($0.sequence) },
            try bus.subscribe(matching: "test.>", delivery: .queued()) { any.append($0.topic) },
        ]
        try bus.post(Tick(number: 1))
        try bus.post(Tick(number: 2))
        #expect(await typed.wait(forCount: 2))
        #expect(await any.wait(forCount: 2))
        #expect(typed.values == [1, 2])
        #expect(any.values == ["test.tick", "test.tick"])
        withExtendedLifetime(tokens) {}
    }

    @Test func capacityBelowOneIsRefused() {
        let bus = EventBus()
        do {
            _ = try bus.subscribe(to: Tick.self, delivery: .queued(capacity: 0)) { _ in }
            Issue.record("capacity 0 accepted")
        } catch {
            #expect(error.code == .invalidOption)
            #expect(error.description == "mailbox capacity must be at least 1, got 0")
        }
    }

    @Test func envelopeEncodesAsOneJSONObject() throws {
        let bus = EventBus(configuration: .init(clock: { Date(timeIntervalSince1970: 0) }))
        let received = Recording<Envelope<any Event>>()
        let token = try bus.subscribe(matching: ">") { received.append($0) }
        try bus.post(Tick(number: 7), from: "clock")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        let json = String(decoding: try encoder.encode(try #require(received.values.first)), as: UTF8.self)
        let id = "\(bus.id.uuidString.lowercased()):1"
        #expect(json == #"{"correlation":"\#(id)","event":{"number":7,"publisher":0},"id":"\#(id)","sender":"clock","seq":1,"time":"1970-01-01T00:00:00Z","topic":"test.tick"}"#)
        withExtendedLifetime(token) {}
    }
}

/// State only the main actor may touch: the main-actor handler writes it without a hop.
@MainActor enum MainActorLog {
    static var numbers: [Int] = []
}
