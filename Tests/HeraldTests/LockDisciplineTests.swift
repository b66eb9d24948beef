import Foundation
import Herald
import HeraldTestSupport
import Testing
import HeraldTesting

/// The bus's lock guards its state and every mailbox. Nothing that may run user code runs under
/// it: an event's deinit and the configured clock may use the bus (re-entering the lock would
/// trap the process), and the reports a publish causes are ordered and waited for.
@Suite struct LockDisciplineTests {
    /// Uses the bus when released.
    final class BusUser: Sendable {
        let bus: EventBus
        let freed: Recording<Int>
        let number: Int

        init(bus: EventBus, freed: Recording<Int>, number: Int) {
            self.bus = bus
            self.freed = freed
            self.number = number
        }

        deinit {
            _ = bus.stats()
            freed.append(number)
        }
    }

    /// An event that holds a `BusUser`; it encodes its number only.
    struct Parcel: Event {
        static let topic: Topic = "test.parcel"
        var topic: Topic { Self.topic }
        let user: BusUser

        init(user: BusUser) { self.user = user }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(user.number)
        }

        init(from decoder: any Decoder) throws {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not decodable"))
        }
    }

    @Test func eventsAStreamHandedOutAreReleasedOutsideTheBusLock() async throws {
        let bus = EventBus()
        let freed = Recording<Int>()
        let stream = try bus.events(of: Parcel.self)
        for number in 1...3 { try bus.post(Parcel(user: BusUser(bus: bus, freed: freed, number: number))) }
        var iterator = stream.makeAsyncIterator()
        for _ in 1...3 { _ = try #require(await iterator.next()) }
        // Taking the last one spends the stream's buffer, whose copies are the last references.
        #expect(await freed.wait(forCount: 3))
        #expect(Set(freed.values) == [1, 2, 3])
        withExtendedLifetime(stream) {}
    }

    @Test func aClockThatUsesTheBusIsNeverCalledUnderItsLock() async throws {
        let holder = Locked<EventBus?>(nil)
        let bus = EventBus(configuration: .init(clock: {
            _ = holder.withLock { $0 }?.stats()
            return Date(timeIntervalSince1970: 1_700_000_000)
        }))
        holder.withLock { $0 = bus }
        defer { holder.withLock { $0 = nil } }
        let received = Recording<Envelope<Tick>>()
        let token = try bus.subscribe(envelopesOf: Tick.self, delivery: .queued()) { envelope in
            received.append(envelope)
        }
        try bus.post(Tick(number: 1))
        try await bus.publish(Tick(number: 2))
        #expect(await received.wait(forCount: 2))
        #expect(received.values.map(\.timestamp) == Array(repeating: Date(timeIntervalSince1970: 1_700_000_000), count: 2))
        withExtendedLifetime(token) {}
    }

    @Test func dropReportsOfABatchHandedOverComeInTheOrderOfTheirTotals() async throws {
        let bus = EventBus()
        let reports = Recording<EventsDropped>()
        let reporting = try bus.subscribe(to: EventsDropped.self) { reports.append($0) }
        let gates = [Gate(), Gate()]
        let batches = Recording<[Int]>()
        let token = try bus.subscribeInBatches(matching: "test.tick", name: "busy", capacity: 10, overflow: .dropNewest) { batch in
            batches.append(batch.map { ($0.event as? Tick)?.number ?? -1 })
            if batches.count <= gates.count { await gates[batches.count - 1].wait() }
        }
        try bus.post(Tick(number: 0))
        #expect(await batches.wait(forCount: 1), "parked in its first batch, wanting the next")
        // 1-8 are handed over; 9 and 10 fill the mailbox; 11-20 are dropped: the first drop is
        // reported at once, the other nine wait for the next batch.
        for number in 1...20 { try bus.post(Tick(number: number)) }
        #expect(reports.values.map(\.total) == [1])
        gates[0].open()
        #expect(await batches.wait(forCount: 2), "parked in the batch handed over, wanting the next")
        // 21-26 make eight waiting: handed over, with the nine drops reported; 27 and 28 fill
        // the mailbox again and 29 is dropped, reported at once.
        for number in 21...29 { try bus.post(Tick(number: number)) }
        #expect(reports.values.map(\.total) == [1, 10, 11])
        #expect(reports.values.map(\.count) == [1, 9, 1])
        gates[1].open()
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(batches.values.flatMap { $0 } == Array(0...10) + Array(21...28))
        withExtendedLifetime((token, reporting)) {}
    }
}
