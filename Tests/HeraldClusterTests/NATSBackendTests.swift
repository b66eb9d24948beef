import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldNATS
import HeraldSubscribers
import HeraldTestSupport
import Testing
import HeraldTesting

/// The backend, the exporter and the importer against a real `nats-server -js`.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct NATSBackendTests {
    @Test func connectingCreatesTheStreamsConsumersAndBucketsWithTheSettingsAndASecondNodeSharesThem() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let settings = ClusterTestSettings.make([server.url], node: "a", leaseTTL: .seconds(3), ackWait: .seconds(4))
        let a = try await NATSClusterBackend.open(settings)
        let b = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "b", leaseTTL: .seconds(3), ackWait: .seconds(4)))
        // A server that stops answering is found stale (pings unanswered) within the lease's TTL.
        let options = a.connection.options
        #expect(options.pingInterval * (options.maxPingsOutstanding + 1) <= settings.leaseTTL, "\(options.pingInterval)")
        #expect(options.maxPayload == settings.maxPayload)
        let js = a.jetStream
        let events = try await js.streamInfo("HERALD").config
        #expect(events.subjects == ["herald.>"] && events.replicas == 1 && events.retention == .limits)
        #expect(events.duplicateWindow == .seconds(120) && events.maxAge == .seconds(86_400))
        let posts = try await js.streamInfo("HERALD_POSTS").config
        #expect(posts.subjects == ["herald-posts.>"] && posts.retention == .workQueue)
        let posters = try await js.consumerInfo(stream: "HERALD_POSTS", consumer: "herald-posters").config
        #expect(posters.ackWait == .seconds(4) && posters.ackPolicy == .explicit)
        for node in ["a", "b"] {
            #expect(try await js.consumerInfo(stream: "HERALD", consumer: "herald-import-\(node)").config.ackPolicy == .explicit)
        }
        #expect(try await js.streamInfo("KV_herald_leases").config.maxAge == .seconds(3))
        #expect(try await js.streamInfo("KV_herald_state").config.maxAge == .zero)
        #expect(try await js.streamInfo("HERALD").state.consumerCount == 2)
        await a.close()
        await b.close()
    }

    @Test func aStreamThatExistsWithOtherSettingsIsRefusedNamingTheDifferenceAndLeftAsItIs() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let first = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        var other = ClusterTestSettings.make([server.url], node: "b")
        other.maxAge = .seconds(3600)
        let error = await #expect(throws: ClusterError.self) { _ = try await NATSClusterBackend.open(other) }
        #expect(error?.isUnavailable == false)
        #expect(error?.message.contains("the stream HERALD exists with other settings: max age 86400.0 seconds (this node wants 3600.0 seconds)") == true,
                "\(error?.message ?? "")")
        #expect(try await first.jetStream.streamInfo("HERALD").config.maxAge == .seconds(86_400))

        var ackWait = ClusterTestSettings.make([server.url], node: "c")
        ackWait.ackWait = .seconds(9)
        let consumerError = await #expect(throws: ClusterError.self) { _ = try await NATSClusterBackend.open(ackWait) }
        #expect(consumerError?.message.contains("the consumer herald-posters of the stream HERALD_POSTS exists with other settings: ack wait") == true,
                "\(consumerError?.message ?? "")")
        await first.close()
    }

    @Test func anUnreachableServerIsUnavailableAndAServerWithoutJetStreamIsNamed() async throws {
        let port = try NATSServerProcess.freePort()
        let unreachable = await #expect(throws: ClusterError.self) {
            _ = try await NATSClusterBackend.open(ClusterTestSettings.make(["nats://127.0.0.1:\(port)"], node: "a"))
        }
        #expect(unreachable?.isUnavailable == true)
        #expect(unreachable?.message.contains("127.0.0.1:\(port)") == true, "\(unreachable?.message ?? "")")

        let plain = try await NATSServerProcess.start(jetStream: false)
        defer { Task { await plain.stop() } }
        let noJetStream = await #expect(throws: ClusterError.self) {
            _ = try await NATSClusterBackend.open(ClusterTestSettings.make([plain.url], node: "a"))
        }
        #expect(noJetStream?.message.contains("-js") == true, "\(noJetStream?.message ?? "")")
    }

    @Test func theExporterPublishesEachEventOnceWithItsIdHeadersAndTheArchivesObject() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let backend = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        let watcher = try NATSConnection(servers: [server.url], name: "watcher")
        try await watcher.connect()
        let subscription = try watcher.subscribe("herald.>")
        try await watcher.flush()

        let bus = EventBus()
        let local = try EventRecorder(bus: bus, matching: "orders.>")
        let group = await RunningGroup([.init("export", EventExporter(bus: bus, publisher: backend.publisher, node: "a",
                                                                      patterns: ["orders.>"], clock: ContinuousClock()))])
        try await bus.publish(Signal(topic: "orders.created", n: 7), from: "shop")
        try await bus.publish(Signal(topic: "other.thing", n: 8), from: "shop")
        try await bus.publish(Signal(topic: "orders.paid", n: 9), from: "shop")

        var received: [NATSMessage] = []
        for await message in subscription {
            received.append(message)
            if received.count == 2 { break }
        }
        let envelopes = local.envelopes
        #expect(received.map(\.subject) == ["herald.orders.created", "herald.orders.paid"])
        for (message, envelope) in zip(received, envelopes) {
            #expect(message.headers?["Nats-Msg-Id"] == envelope.id.description)
            #expect(message.headers?["Herald-Node"] == "a")
            #expect(message.headers?["Herald-Sender"] == "shop")
            #expect(message.headers?["Herald-Correlation"] == envelope.correlationID.description)
            var encoder = EnvelopeLineEncoder()
            var line = try encoder.line(for: envelope)
            line.removeLast()
            #expect(message.payload == line)
        }
        #expect(try await backend.jetStream.streamInfo("HERALD").state.messages == 2)

        // A retried publish (the same Nats-Msg-Id) is stored once.
        let again = try ClusterEventCodec(node: "a").message(for: envelopes[0])
        let results = await backend.publisher.publish([again])
        #expect(try results.first?.get().duplicate == true)
        #expect(try await backend.jetStream.streamInfo("HERALD").state.messages == 2)
        await group.stop()
        await watcher.close()
        await backend.close()
    }

    @Test func theImporterBringsOtherNodesAndExternalEventsNeverItsOwnAndReportsMalformedOnes() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        let b = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "b"))
        let busA = EventBus(), busB = EventBus()
        let logA = try EventRecorder(bus: busA), logB = try EventRecorder(bus: busB)
        let clock = ContinuousClock()
        let groupA = await RunningGroup([
            .init("export", EventExporter(bus: busA, publisher: a.publisher, node: "a", patterns: [">"], clock: clock)),
            .init("import", EventImporter(bus: busA, consumer: a.imports, node: "a", clock: clock)),
        ])
        let groupB = await RunningGroup([.init("import", EventImporter(bus: busB, consumer: b.imports, node: "b", clock: clock))])

        let id = try await busA.publish(Signal(topic: "orders.created", n: 7), from: "shop")
        let remote = await logB.first(RemoteEvent.self)
        #expect(remote?.node == "a" && remote?.topic == "orders.created" && remote?.origin.id == id.description)
        #expect(remote?.event["n"] == .integer(7))
        let imported = logB.envelopes.first { $0.event is RemoteEvent }
        #expect(imported?.sender == "shop")

        let outsider = a.jetStream
        _ = try await outsider.publish("herald.orders.shipped", payload: Array(#"{"event":{"order":7}}"#.utf8))
        _ = try await outsider.publish("herald.orders.broken", payload: Array("not json".utf8))
        for log in [logA, logB] {
            let external = await log.first(RemoteEvent.self) { $0.topic == "orders.shipped" }
            #expect(external?.node == "external" && external?.event == .object(["order": .integer(7)]))
            let rejected = await log.first(ClusterImportRejected.self)
            #expect(rejected?.subject == "herald.orders.broken" && rejected?.reason == "the body is not JSON")
        }
        // Node a reached the messages after its own event: it imported none of its own.
        #expect(!logA.events(RemoteEvent.self).contains { $0.node == "a" })
        #expect(logA.events(RemoteEvent.self).count == 1)
        await groupA.stop()
        await groupB.stop()
        await a.close()
        await b.close()
    }

    /// nats-server 2.9 answers nothing to a pull for a consumer that is gone: the pull times out,
    /// the node looks the consumer up, makes it again, and it starts after the last message the
    /// node pulled: the events stored meanwhile are imported, none twice.
    @Test func anImportConsumerDeletedUnderARunningNodeIsMadeAgainAfterTheLastMessagePulled() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let b = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "b"))
        let js = b.jetStream
        for n in 1...2 { _ = try await js.publish("herald.before", payload: Array(#"{"event":{"n":\#(n)}}"#.utf8)) }
        var pulled: [String] = []
        while pulled.count < 2 {
            for delivery in try await b.imports.fetch(batch: 10, wait: .seconds(1)) {
                pulled.append(String(decoding: delivery.message.payload, as: UTF8.self))
                try await delivery.settle(.ack)
            }
        }
        let deleted = try await b.connection.request("$JS.API.CONSUMER.DELETE.HERALD.herald-import-b", timeout: .seconds(5))
        #expect(String(decoding: deleted.payload, as: UTF8.self).contains(#""success":true"#))
        for n in 3...5 { _ = try await js.publish("herald.meanwhile", payload: Array(#"{"event":{"n":\#(n)}}"#.utf8)) }
        // Each failed pull tried to make the consumer again; the pulls after it find the three
        // (twenty pulls at most: a consumer made again from its creation on would find nothing).
        var pulls = 0
        while pulled.count < 5, pulls < 20 {
            pulls += 1
            do {
                for delivery in try await b.imports.fetch(batch: 10, wait: .seconds(1)) {
                    pulled.append(String(decoding: delivery.message.payload, as: UTF8.self))
                    try await delivery.settle(.ack)
                }
            } catch {
                continue
            }
        }
        #expect(pulled == (1...5).map { #"{"event":{"n":\#($0)}}"# })
        #expect(try await js.consumerInfo(stream: "HERALD", consumer: "herald-import-b").config.ackPolicy == .explicit)
        await b.close()
    }
}

/// What a cluster that cannot place the replicas answers, and that a node waits that out.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct NATSPlacementTests {
    /// A leader just elected may not know every peer yet and answers "no suitable peers for
    /// placement" (10005); so does a cluster with fewer servers than the replicas. The first
    /// passes, so the node asks again (until its connect wait ends the second).
    @Test func aClusterThatCannotPlaceTheReplicasYetIsUnavailableNamingWhy() async throws {
        let servers = try await NATSServerProcess.startCluster(count: 2) { routes, index in
            ["--server_name", "p\(index + 1)", "--cluster_name", "placement", "--cluster", "nats://127.0.0.1:\(routes[index])",
             "--routes", "nats://127.0.0.1:\(routes[1 - index])"]
        }
        defer { Task { for server in servers { await server.stop() } } }
        var settings = ClusterTestSettings.make(servers.map(\.url), node: "a")
        settings.replicas = 3
        var answers: [String] = []
        // Until the cluster has a leader to answer (bounded by tries, not time): until then a
        // request gets no reply or "temporarily unavailable", both unavailable too.
        for _ in 0..<20 {
            let error = await #expect(throws: ClusterError.self) { _ = try await NATSClusterBackend.open(settings) }
            #expect(error?.isUnavailable == true, "\(error?.message ?? "")")
            answers.append(error?.message ?? "")
            if error?.message.contains("10005") == true { break }
        }
        #expect(answers.last?.contains("no suitable peers for placement") == true, "\(answers)")
        #expect(answers.last?.contains("as many servers as the replicas") == true, "\(answers)")
    }
}
