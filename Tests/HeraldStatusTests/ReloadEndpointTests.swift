import Foundation
import Herald
import HeraldSync
import HeraldTestSupport
import Testing

@testable import HeraldStatus

/// `POST /-/reload`: served on a loopback listener only, as Prometheus's lifecycle API is; a
/// listener that takes remote peers (`"allowRemote": true`, host `0.0.0.0`) refuses it, and
/// another method gets 405 with `Allow`.
@Suite(.timeLimit(.minutes(5))) struct ReloadEndpointTests {
    /// Sources whose reload counts its calls and applies.
    static func sources(counting calls: Locked<Int>) -> StatusSources {
        let sources = StatusSources(bus: EventBus())
        sources.setReloader {
            calls.withLock { $0 += 1 }
            return StatusReloadResult(ok: true, applied: true, changes: ["loaders.todos: added"])
        }
        return sources
    }

    /// `curl -i -X method` of `path` on `127.0.0.1:port`.
    static func request(port: Int, _ path: String, method: String) async throws -> (status: Int, headers: String, body: String) {
        let output = try await Curl.run(["-i", "-X", method, "http://127.0.0.1:\(port)\(path)"])
        let parts = output.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func aListenerThatTakesRemotePeersRefusesReloadWith403() async throws {
        let calls = Locked(0)
        let endpoint = StatusEndpoint(host: "0.0.0.0", port: 0, sources: Self.sources(counting: calls))
        let task = Task { try await endpoint.run() }
        let url = try #require(await endpoint.waitUntilServing())
        let port = try #require(url.port)

        let refused = try await Self.request(port: port, "/-/reload", method: "POST")
        #expect(refused.status == 403, "\(refused.headers)")
        #expect(refused.body.contains("/-/reload is served on a loopback listener only"), "\(refused.body)")
        #expect(calls.withLock { $0 } == 0, "the daemon was asked to reload")
        // The rest of the endpoint serves there.
        #expect(try await Self.request(port: port, "/healthz", method: "GET").status == 200)

        task.cancel()
        try await task.value
    }

    @Test func reloadAnswersPostOnlyAndALoopbackListenerServesIt() async throws {
        let calls = Locked(0)
        let running = try await RunningEndpoint.start(Self.sources(counting: calls))

        for method in ["GET", "PUT", "DELETE"] {
            let wrong = try await running.get("/-/reload", method: method)
            #expect(wrong.status == 405, "\(method): \(wrong.headers)")
            #expect(wrong.headers.lowercased().contains("\r\nallow: post"), "\(method): \(wrong.headers)")
        }
        #expect(calls.withLock { $0 } == 0)

        let applied = try await running.get("/-/reload", method: "POST")
        #expect(applied.status == 200, "\(applied.headers)\(applied.body)")
        #expect(try StatusReloadResult.decode(Data(applied.body.utf8)).changes == ["loaders.todos: added"])
        #expect(calls.withLock { $0 } == 1)
        try await running.stop()
    }
}
