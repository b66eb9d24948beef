import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// Key-value buckets against a real `nats-server -js`: the lease operations the bridge needs.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct KeyValueTests {
    @Test func createIfAbsentUpdateWithRevisionAndDelete() async throws {
        let server = try await NATSServerProcess.start()
        let connection = try NATSConnection(servers: [server.url])
        try await connection.connect()
        let js = connection.jetStream(timeout: .seconds(30))
        let config = KeyValueConfiguration(bucket: "leases", history: 5, ttl: .seconds(3600), replicas: 1)
        let bucket = try await js.createKeyValue(config)
        _ = try await js.createKeyValue(config)

        #expect(try await bucket.get("loader.timeline") == nil)
        let first = try await bucket.create("loader.timeline", value: Array("node-a".utf8))
        do {
            try await bucket.create("loader.timeline", value: Array("node-b".utf8))
            Issue.record("a second create succeeded")
        } catch let error as KeyValueError {
            #expect(error.kind == .keyExists)
        }
        let entry = try #require(try await bucket.get("loader.timeline"))
        #expect(entry.value == Array("node-a".utf8))
        #expect(entry.revision == first)
        #expect(entry.operation == .put)

        let renewed = try await bucket.update("loader.timeline", value: Array("node-a".utf8), revision: first)
        #expect(renewed > first)
        do {
            try await bucket.update("loader.timeline", value: Array("node-b".utf8), revision: first)
            Issue.record("an update with a stale revision succeeded")
        } catch let error as KeyValueError {
            #expect(error.kind == .wrongRevision)
        }
        #expect(try await bucket.get("loader.timeline")?.revision == renewed)

        try await bucket.delete("loader.timeline", revision: renewed)
        #expect(try await bucket.get("loader.timeline") == nil)
        #expect(try await bucket.entry("loader.timeline")?.operation == .delete)
        let recreated = try await bucket.create("loader.timeline", value: Array("node-b".utf8))
        #expect(try await bucket.get("loader.timeline")?.revision == recreated)
        try await bucket.put("state.timeline", value: Array("{\"since\":7}".utf8))
        try await bucket.purge("state.timeline")
        #expect(try await bucket.get("state.timeline") == nil)
        #expect(try await bucket.entry("state.timeline")?.operation == .purge)

        await #expect(throws: KeyValueError.self) { try await bucket.put("bad key", value: []) }
        await #expect(throws: KeyValueError.self) { try await js.keyValue("missing") }
        #expect(try await js.keyValue("leases").bucket == "leases")
        await connection.close()
        await server.stop()
    }

    @Test func bucketSettingsMapToItsStreamAndOtherSettingsAreRefused() async throws {
        let server = try await NATSServerProcess.start()
        let connection = try NATSConnection(servers: [server.url])
        try await connection.connect()
        let js = connection.jetStream(timeout: .seconds(30))
        let bucket = try await js.createKeyValue(KeyValueConfiguration(bucket: "cfg", history: 3, ttl: .seconds(15)))
        let info = try await bucket.info()
        #expect(info.config.name == "KV_cfg")
        #expect(info.config.subjects == ["$KV.cfg.>"])
        #expect(info.config.maxAge == .seconds(15))
        #expect(info.config.maxMessagesPerSubject == 3)
        #expect(info.config.replicas == 1)
        #expect(info.config.allowRollup == true)
        do {
            _ = try await js.createKeyValue(KeyValueConfiguration(bucket: "cfg", history: 3, ttl: .seconds(30)))
            Issue.record("a bucket with another TTL was accepted")
        } catch let error as JetStreamError {
            #expect(error.errorCode == JetStreamError.streamNameInUse)
        }
        await connection.close()
        await server.stop()
    }
}
