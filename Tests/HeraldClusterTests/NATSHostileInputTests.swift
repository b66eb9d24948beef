import Foundation
import Herald
import HeraldCluster
import HeraldNATS
import HeraldTestSupport
import Testing
import HeraldTesting

/// Messages and servers that misbehave: one message's bad header block is that message's
/// problem; a server that drops every connection after the handshake is named as the cause.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(3)))
struct NATSHostileInputTests {
    /// Before: the client dropped its connection at the message, the server delivered it again
    /// after the ack wait, and the node reconnected every 30 s without end.
    @Test func aMessageWithAMalformedHeaderBlockIsReportedOnceAndTheConnectionStays() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        let bus = EventBus()
        let log = try EventRecorder(bus: bus)
        let reports = Task { for await report in a.reports { _ = try? await bus.publish(report, from: "cluster") } }
        let group = await RunningGroup([.init("import", EventImporter(bus: bus, consumer: a.imports, node: "a", clock: ContinuousClock()))])

        // Another program stores a message whose header block is too short, then a good event.
        let raw = try #require(RawClient(port: server.port))
        raw.send("CONNECT {\"headers\":true,\"verbose\":false,\"protocol\":1}\r\n")
        raw.send("HPUB herald.orders.bad 11 13\r\nNATS/1.0\r\n\nhi\r\n")
        let good = #"{"event":{"order":8}}"#
        raw.send("PUB herald.orders.good \(good.utf8.count)\r\n\(good)\r\nPING\r\n")
        _ = await raw.read { $0.contains("PONG") }

        await log.wait { envelopes in
            envelopes.contains { $0.event is ClusterImportRejected || ($0.event as? ClusterConnectionChanged)?.kind == .disconnected }
        }
        let disconnects = log.events(ClusterConnectionChanged.self).filter { $0.kind == .disconnected }
        guard disconnects.isEmpty else {
            Issue.record("the message cost the connection: \(disconnects)")
            await group.stop()
            await a.close()
            reports.cancel()
            return
        }
        let rejected = await log.first(ClusterImportRejected.self)
        #expect(rejected?.subject == "herald.orders.bad" && rejected?.reason.contains("header") == true, "\(String(describing: rejected))")
        let external = await log.first(RemoteEvent.self)
        #expect(external?.topic == "orders.good")
        // The importer settles a message after the bus took it, then pulls again: once a later
        // message arrives, the server has the settlements of the two before it (stream 1 and 2).
        let marker = #"{"event":{"order":9}}"#
        raw.send("PUB herald.orders.marker \(marker.utf8.count)\r\n\(marker)\r\nPING\r\n")
        _ = await log.wait { envelopes in envelopes.contains { ($0.event as? RemoteEvent)?.topic == "orders.marker" } }
        let consumer = try await a.jetStream.consumerInfo(stream: "HERALD", consumer: "herald-import-a")
        #expect((consumer.ackFloor?.streamSequence ?? 0) >= 2, "the bad and the good message are settled: \(String(describing: consumer.ackFloor))")
        #expect(consumer.numRedelivered == 0 && consumer.numPending == 0)
        #expect(log.events(ClusterImportRejected.self).count == 1)
        await group.stop()
        await a.close()
        reports.cancel()
    }

    /// Before: the error was the provisioning request that timed out behind the reconnects
    /// ("no reply on '$JS.API.STREAM.INFO.HERALD'"), not why.
    @Test func aServerThatClosesEveryConnectionAfterTheHandshakeIsNamedAsTheCause() async throws {
        let fake = try FakeNATSServer { _ in }
        defer { fake.stop() }
        let error = await #expect(throws: ClusterError.self) {
            _ = try await NATSClusterBackend.open(ClusterTestSettings.make([fake.url], node: "a"))
        }
        #expect(error?.isUnavailable == true)
        // Closed or reset, as the client's unread PING and subscriptions make it: the cause
        // comes first, the request that timed out behind it after.
        let message = error?.message ?? ""
        #expect(message.hasPrefix("the connection keeps failing: 127.0.0.1:\(fake.port): "), "\(message)")
        #expect(message.contains("closed the connection") || message.contains("reset by peer"), "\(message)")
    }
}
