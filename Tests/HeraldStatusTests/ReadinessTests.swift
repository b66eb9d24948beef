import Foundation
import Herald
import HeraldLifecycle
import HeraldSync
import Testing

@testable import HeraldStatus

/// A service that announces itself only when the test says so.
struct GatedService: Service {
    let gate: AsyncStream<Void>

    func run() async throws {
        for await _ in gate { break }
        announceStarted()
        try? await gracefulShutdown()
    }
}

/// `/readyz` in a service group, as the daemon runs it: the endpoint serves first, and is not
/// ready until the group says every service started.
@Suite(.timeLimit(.minutes(5))) struct ReadinessTests {
    @Test func readyzIsNotReadyUntilEveryServiceOfTheGroupStarted() async throws {
        let sources = StatusSources(bus: EventBus())
        let endpoint = StatusEndpoint(port: 0, sources: sources)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let (events, event) = AsyncStream<ServiceGroup.Event>.makeStream()
        let group = ServiceGroup([.init("http", endpoint), .init("later", GatedService(gate: gate))]) { happened in
            if happened == .started { sources.markReady() }
            event.yield(happened)
        }
        let run = Task { try await group.run() }
        let url = try #require(await endpoint.waitUntilServing())
        let running = RunningEndpoint(endpoint: endpoint, task: Task {}, url: url)

        let before = try await running.get("/readyz")
        #expect(before.status == 503)
        #expect(before.body.contains("not ready"))
        #expect(try await running.get("/healthz").status == 200)

        open.yield()
        for await happened in events where happened == .started { break }
        let after = try await running.get("/readyz")
        #expect(after.status == 200)
        #expect(samples(try await running.get("/metrics").body)["herald_ready"] == 1)

        run.cancel()
        try await run.value
        #expect(endpoint.httpServer?.snapshot.stopping == true)
    }

    @Test func readyzIsNotReadyWhileAReadinessCheckSaysWhy() async throws {
        let sources = StatusSources(bus: EventBus())
        let down = SyncLock<String?>("the cluster connection is down (disconnected: test)")
        sources.addReadinessCheck { down.withLock { $0 } }
        let running = try await RunningEndpoint.start(sources)
        sources.markReady()
        let whileDown = try await running.get("/readyz")
        #expect(whileDown.status == 503)
        #expect(whileDown.body == "not ready: the cluster connection is down (disconnected: test)\n")
        #expect(samples(try await running.get("/metrics").body)["herald_ready"] == 0)

        down.withLock { $0 = nil }
        #expect(try await running.get("/readyz").status == 200)
        #expect(samples(try await running.get("/metrics").body)["herald_ready"] == 1)
        try await running.stop()
    }
}
