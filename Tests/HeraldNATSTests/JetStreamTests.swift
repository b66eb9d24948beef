import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// JetStream against a real `nats-server -js`: streams, acked publishes, dedupe, pull consumers.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct JetStreamTests {
    static func connected() async throws -> (NATSServerProcess, NATSConnection, JetStreamContext) {
        let server = try await NATSServerProcess.start()
        let connection = try NATSConnection(servers: [server.url], name: "jetstream-test")
        try await connection.connect()
        return (server, connection, connection.jetStream(timeout: .seconds(30)))
    }

    @Test func streamCreateIsIdempotentAndOtherSettingsGiveAClearError() async throws {
        let (server, connection, js) = try await Self.connected()
        var config = StreamConfiguration(name: "EVENTS", subjects: ["herald.>"], storage: .file, replicas: 1)
        config.duplicateWindow = .seconds(60)
        let created = try await js.createStream(config)
        #expect(created.config.name == "EVENTS")
        #expect(created.config.subjects == ["herald.>"])
        #expect(created.config.duplicateWindow == .seconds(60))
        #expect(created.state.messages == 0)

        let again = try await js.createStream(config)
        #expect(again.config == created.config)

        var other = config
        other.subjects = ["other.>"]
        do {
            _ = try await js.createStream(other)
            Issue.record("a stream with other settings was accepted")
        } catch let error as JetStreamError {
            #expect(error.errorCode == JetStreamError.streamNameInUse)
            #expect(error.errorDescription.contains("different configuration"))
            #expect(error.subject == "$JS.API.STREAM.CREATE.EVENTS")
        }
        do {
            _ = try await js.streamInfo("MISSING")
            Issue.record("info of a missing stream succeeded")
        } catch let error as JetStreamError {
            #expect(error.errorCode == JetStreamError.streamNotFound)
        }
        var updated = config
        updated.maxMessages = 1000
        #expect(try await js.updateStream(updated).config.maxMessages == 1000)
        await #expect(throws: NATSError.self) { _ = try await js.createStream(StreamConfiguration(name: "bad.name")) }
        await connection.close()
        await server.stop()
    }

    @Test func publishWithAckAndDedupeByMessageID() async throws {
        let (server, connection, js) = try await Self.connected()
        _ = try await js.createStream(StreamConfiguration(name: "DEDUPE", subjects: ["dedupe.>"]))
        var headers = NATSHeaders()
        headers["Herald-Node"] = "a"
        let first = try await js.publish("dedupe.one", payload: Array("x".utf8), headers: headers, options: .init(messageID: "event-1"))
        #expect(first == PubAck(stream: "DEDUPE", sequence: 1, duplicate: false))
        let repeated = try await js.publish("dedupe.one", payload: Array("x".utf8), options: .init(messageID: "event-1"))
        #expect(repeated.duplicate)
        #expect(repeated.sequence == 1)
        let second = try await js.publish("dedupe.one", payload: Array("y".utf8), options: .init(messageID: "event-2"))
        #expect(second.sequence == 2 && !second.duplicate)
        #expect(try await js.streamInfo("DEDUPE").state.messages == 2)

        do {
            _ = try await js.publish("dedupe.one", options: .init(expectedLastSequence: 1))
            Issue.record("a wrong expected last sequence was accepted")
        } catch let error as JetStreamError {
            #expect(error.errorCode == JetStreamError.wrongLastSequence)
        }
        do {
            _ = try await js.publish("no.stream.here", payload: [])
            Issue.record("a publish no stream takes was acked")
        } catch let error as NATSError {
            #expect(error.kind == .noResponders)
        }
        await connection.close()
        await server.stop()
    }

    @Test func asyncPublishesInAWindowAreAllAckedInOrder() async throws {
        let (server, connection, _) = try await Self.connected()
        let js = connection.jetStream(timeout: .seconds(30), maxPendingPublishes: 16)
        _ = try await js.createStream(StreamConfiguration(name: "WINDOW", subjects: ["window.*"]))
        var futures: [JetStreamPublishFuture] = []
        for index in 0..<500 {
            futures.append(try await js.publishAsync("window.\(index % 3)", payload: Array("\(index)".utf8),
                                                     options: .init(messageID: "m-\(index % 400)")))
            #expect(js.pendingPublishes <= 16)
        }
        await js.waitForPendingPublishes()
        var acks: [PubAck] = []
        for future in futures { acks.append(try await future.value) }
        #expect(acks.prefix(400).map(\.sequence) == Array(1...400))
        #expect(acks.prefix(400).allSatisfy { !$0.duplicate })
        #expect(acks.suffix(100).allSatisfy { $0.duplicate })
        #expect(try await js.streamInfo("WINDOW").state.messages == 400)
        await connection.close()
        await server.stop()
    }

    @Test func pullConsumerAckNakAndRedelivery() async throws {
        let (server, connection, js) = try await Self.connected()
        _ = try await js.createStream(StreamConfiguration(name: "WORK", subjects: ["work.>"], retention: .workQueue))
        let consumer = try await js.createConsumer(stream: "WORK", ConsumerConfiguration(durableName: "workers", ackWait: .seconds(30)))
        #expect(consumer.name == "workers")
        #expect(consumer.config.ackPolicy == .explicit)
        #expect(try await js.createConsumer(stream: "WORK", ConsumerConfiguration(durableName: "workers", ackWait: .seconds(30))).name == "workers")
        for index in 1...3 { _ = try await js.publish("work.item", payload: Array("job \(index)".utf8)) }

        let first = try await js.fetch(stream: "WORK", consumer: "workers", batch: 2)
        #expect(first.map { String(decoding: $0.payload, as: UTF8.self) } == ["job 1", "job 2"])
        #expect(first.map(\.metadata.streamSequence) == [1, 2])
        #expect(first.allSatisfy { $0.metadata.deliveries == 1 && $0.metadata.stream == "WORK" && $0.metadata.consumer == "workers" })
        #expect(first[0].metadata.pending == 2)
        try first[0].ack()
        try first[1].nak()

        // Returns as soon as both arrived (a short expiry could end it first on a slow machine).
        let second = try await js.fetch(stream: "WORK", consumer: "workers", batch: 2, expires: .seconds(60))
        let bySequence = Dictionary(uniqueKeysWithValues: second.map { ($0.metadata.streamSequence, $0) })
        #expect(Set(bySequence.keys) == [2, 3])
        #expect(bySequence[2]?.metadata.deliveries == 2)
        #expect(bySequence[3]?.metadata.deliveries == 1)
        try bySequence[2]?.inProgress()
        try await bySequence[2]?.doubleAck()
        try bySequence[3]?.term()
        try await connection.flush()

        let empty = try await js.fetch(stream: "WORK", consumer: "workers", batch: 1, noWait: true)
        #expect(empty.isEmpty)
        let info = try await js.consumerInfo(stream: "WORK", consumer: "workers")
        #expect(info.numAckPending == 0)
        do {
            _ = try await js.consumerInfo(stream: "WORK", consumer: "nobody")
            Issue.record("info of a missing consumer succeeded")
        } catch let error as JetStreamError {
            #expect(error.errorCode == JetStreamError.consumerNotFound)
        }
        await connection.close()
        await server.stop()
    }

    @Test func ackSubjectMetadataParsesBothForms() throws {
        let v1 = try JetStreamMessage.Metadata(parsing: "$JS.ACK.ORDERS.workers.3.17.9.1700000000000000000.4")
        #expect(v1.stream == "ORDERS" && v1.consumer == "workers" && v1.deliveries == 3)
        #expect(v1.streamSequence == 17 && v1.consumerSequence == 9 && v1.pending == 4 && v1.domain == nil)
        let v2 = try JetStreamMessage.Metadata(parsing: "$JS.ACK.hub.ACCHASH.ORDERS.workers.1.2.3.1700000000000000000.0.xyz")
        #expect(v2.domain == "hub" && v2.stream == "ORDERS" && v2.streamSequence == 2)
        #expect(throws: NATSError.self) { try JetStreamMessage.Metadata(parsing: "$JS.ACK.ORDERS.workers.x.2.3.4.5") }
        #expect(throws: NATSError.self) { try JetStreamMessage.Metadata(parsing: "orders.new") }
    }
}
