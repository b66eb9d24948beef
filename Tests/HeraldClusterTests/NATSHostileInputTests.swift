import Foundation
import Herald
import HeraldCluster
import HeraldNATS
import HeraldTestSupport
import Testing
import HeraldTesting

/// Messages and servers that misbehave: one message's bad header block or size is that
/// message's problem; a server that drops every connection after the handshake is named as the
/// cause.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct NATSHostileInputTests {
    /// Header blocks nats-server stores as they are: too short for `NATS/1.0` and its end, a
    /// line without a colon, a bad status line.
    static let malformedHeaderBlocks = ["NATS/1.0\r\n\n", "NATS/1.0\r\nNoColonHere\r\n\r\n", "NATS/1.0 5x3\r\n\r\n"]

    /// Before: the client dropped its connection at the message, the server delivered it again
    /// after the ack wait, and the node reconnected every 30 s without end.
    @Test(arguments: malformedHeaderBlocks)
    func aMessageWithAMalformedHeaderBlockIsReportedOnceAndTheConnectionStays(_ block: String) async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        let frame = "HPUB herald.orders.bad \(block.utf8.count) \(block.utf8.count + 2)\r\n\(block)hi\r\n"
        let rejected = try await Self.importBadMessage(frame, through: a, port: server.port)
        #expect(rejected?.subject == "herald.orders.bad" && rejected?.reason.contains("header") == true, "\(block.debugDescription): \(String(describing: rejected))")
        await a.close()
    }

    /// Runs node `a`'s importer while another program stores `frame` (one whole protocol frame),
    /// then a good event and a marker. Returns the bad message's rejection, or nil (recorded as
    /// an issue) when the message cost the connection; checks that the bad and the good message
    /// were settled once (the importer settles a message after the bus took it, then pulls
    /// again: once the marker arrives, the server has the settlements of the two before it).
    static func importBadMessage(_ frame: String, through a: NATSClusterBackend, port: Int) async throws -> ClusterImportRejected? {
        let bus = EventBus()
        let log = try EventRecorder(bus: bus)
        let reports = Task { for await report in a.reports { _ = try? await bus.publish(report, from: "cluster") } }
        let group = await RunningGroup([.init("import", EventImporter(bus: bus, consumer: a.imports, node: "a", clock: ContinuousClock()))])
        defer { reports.cancel() }
        let raw = try #require(RawClient(port: port))
        raw.send("CONNECT {\"headers\":true,\"verbose\":false,\"protocol\":1}\r\n")
        raw.send(frame)
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
            return nil
        }
        let rejected = await log.first(ClusterImportRejected.self)
        #expect(await log.first(RemoteEvent.self)?.topic == "orders.good")
        let marker = #"{"event":{"order":9}}"#
        raw.send("PUB herald.orders.marker \(marker.utf8.count)\r\n\(marker)\r\nPING\r\n")
        _ = await log.wait { envelopes in envelopes.contains { ($0.event as? RemoteEvent)?.topic == "orders.marker" } }
        let consumer = try await a.jetStream.consumerInfo(stream: "HERALD", consumer: "herald-import-a")
        #expect((consumer.ackFloor?.streamSequence ?? 0) >= 2, "the bad and the good message are settled: \(String(describing: consumer.ackFloor))")
        #expect(consumer.numRedelivered == 0 && consumer.numPending == 0)
        #expect(log.events(ClusterImportRejected.self).count == 1)
        #expect(!log.events(ClusterConnectionChanged.self).contains { $0.kind == .disconnected })
        await group.stop()
        return rejected
    }

    /// A nats-server whose `max_payload` (2 MiB here) is larger than a node's `maxPayload` (1 MiB).
    static func serverWithLargerPayloads() async throws -> NATSServerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-payload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("server.conf")
        try Data("max_payload: 2097152\n".utf8).write(to: config)
        return try await NATSServerProcess.start(arguments: ["-c", config.path])
    }

    /// The streams and buckets are made with `max_msg_size` at the node's `maxPayload`, so the
    /// server refuses what the node could not read; a node with a larger `maxPayload` keeps the
    /// smaller limit and takes the refusal as final (`cluster.export.skipped`, never retried).
    /// Before: no limit; a larger message on `herald.>` was stored and cost every node its
    /// connection at every delivery.
    @Test func theStreamsAndBucketsRefuseMessagesLargerThanTheNodesMaxPayload() async throws {
        let server = try await Self.serverWithLargerPayloads()
        defer { Task { await server.stop() } }
        var settings = ClusterTestSettings.make([server.url], node: "a")
        settings.maxPayload = 1024 * 1024
        let a = try await NATSClusterBackend.open(settings)
        for stream in ["HERALD", "HERALD_POSTS", "KV_\(settings.leaseBucket)", "KV_\(settings.stateBucket)"] {
            #expect(try await a.jetStream.streamInfo(stream).config.maxMessageSize == 1024 * 1024, "\(stream)")
        }
        var larger = ClusterTestSettings.make([server.url], node: "b")
        larger.maxPayload = 2 * 1024 * 1024
        let b = try await NATSClusterBackend.open(larger)
        #expect(try await a.jetStream.streamInfo("HERALD").config.maxMessageSize == 1024 * 1024)
        let big = ClusterMessage(subject: "herald.orders.big", headers: [.init("Nats-Msg-Id", "big-1")],
                                 payload: [UInt8](repeating: UInt8(ascii: "a"), count: 1536 * 1024))
        let refused = await b.publisher.publish([big])
        guard case .failure(let error)? = refused.first else {
            Issue.record("stored: \(refused)")
            return
        }
        #expect(error.isPermanent, "\(error)")
        #expect(try await a.jetStream.streamInfo("HERALD").state.messages == 0)
        await a.close()
        await b.close()
    }

    /// A message stored before the limit (by a stream an older Herald made) reaches the node: its
    /// bytes are passed over unread, it is reported once (`cluster.import.malformed`) and
    /// settled, and the connection stays. The node's next start lowers the stream's limit.
    /// Before: the client dropped the connection at the message's first line, the server
    /// delivered it again after the ack wait, and so on without end.
    @Test func anOversizedMessageStoredBeforeTheLimitIsReportedOnceAndTheConnectionStays() async throws {
        let server = try await Self.serverWithLargerPayloads()
        defer { Task { await server.stop() } }
        var settings = ClusterTestSettings.make([server.url], node: "a")
        settings.maxPayload = 1024 * 1024
        let a = try await NATSClusterBackend.open(settings)
        // The stream as an older Herald made it: no limit.
        var unlimited = try await a.jetStream.streamInfo("HERALD").config
        unlimited.maxMessageSize = -1
        _ = try await a.jetStream.updateStream(unlimited)
        var unlimitedBucket = try await a.jetStream.streamInfo("KV_\(settings.stateBucket)").config
        unlimitedBucket.maxMessageSize = -1
        _ = try await a.jetStream.updateStream(unlimitedBucket)
        let size = 1536 * 1024
        let frame = "PUB herald.orders.big \(size)\r\n" + String(repeating: "a", count: size) + "\r\n"
        let rejected = try await Self.importBadMessage(frame, through: a, port: server.port)
        #expect(rejected?.subject == "herald.orders.big" && rejected?.bytes == size, "\(String(describing: rejected))")
        #expect(rejected?.reason.contains("passed over") == true, "\(String(describing: rejected))")
        await a.close()

        // The next start finds the stream without a limit and lowers it, keeping the rest.
        let again = try await NATSClusterBackend.open(settings)
        let config = try await again.jetStream.streamInfo("HERALD").config
        #expect(config.maxMessageSize == 1024 * 1024)
        #expect(config.subjects == ["herald.>"] && config.maxAge == settings.maxAge && config.duplicateWindow == settings.dedupeWindow)
        let bucket = try await again.jetStream.streamInfo("KV_\(settings.stateBucket)").config
        #expect(bucket.maxMessageSize == 1024 * 1024 && bucket.allowDirect == true && bucket.denyDelete == true && bucket.allowRollup == true)
        await again.close()
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
