import Foundation
import HeraldHTTP
import HeraldSync

/// Answers the status endpoint's paths, on the server's connection threads (reading `/proc` and
/// the parts' snapshots there, never on the cooperative pool): `GET` (and `HEAD`) only, `405`
/// with `Allow` for another method (and for `CONNECT`, whatever it names), `404` for another path.
struct StatusHandler: HTTPRequestHandler {
    let sources: StatusSources
    let hub: EventStreamHub
    let now: @Sendable () -> Date
    /// Whether the endpoint listens on loopback only, where `POST /-/reload` is served.
    var reloadAllowed = true

    static let paths: Set<String> = ["/", "/metrics", "/status", "/healthz", "/readyz", "/events"]
    /// The one path that changes something: asks the daemon to reload its configuration.
    static let reloadPath = "/-/reload"

    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let path = request.path
        // CONNECT names a host, not a path here: the endpoint is no proxy.
        guard request.method != "CONNECT" else {
            return .error(405, "CONNECT is not served; every path answers GET and HEAD only", headers: [("Allow", "GET, HEAD")])
        }
        if path == Self.reloadPath { return reload(request) }
        guard Self.paths.contains(path) else { return .error(404, "no such path: \(path) (try /, /metrics, /status, /events, /healthz, /readyz)") }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, "\(path) answers GET and HEAD only", headers: [("Allow", "GET, HEAD")])
        }
        var response: HTTPServerResponse
        switch path {
        case "/metrics":
            response = .text(200, StatusMetrics.render(report()), headers: [])
            response.setHeader("Content-Type", PrometheusText.contentType)
        case "/status":
            response = HTTPServerResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: report().json())
        case "/healthz":
            response = .text(200, "ok\n")
        case "/readyz":
            response = sources.notReadyReason.map { .text(503, "not ready: \($0)\n") } ?? .text(200, "ready\n")
        case "/events":
            response = hub.respond(to: request)
        default:
            response = HTTPServerResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: StatusPage.html)
        }
        response.setHeader("Cache-Control", "no-store")
        return response
    }

    /// `POST /-/reload`: runs the daemon's reload (this connection's thread waits for it, the
    /// cooperative pool does not) and answers its result: 200 when applied, 422 with every
    /// problem when the file is invalid (nothing changed), 500 when applied but a part failed to
    /// start, 503 when the daemon cannot reload.
    private func reload(_ request: HTTPServerRequest) -> HTTPServerResponse {
        guard request.method == "POST" else {
            return .error(405, "\(Self.reloadPath) answers POST only", headers: [("Allow", "POST")])
        }
        guard reloadAllowed else {
            return .error(403, "\(Self.reloadPath) is served on a loopback listener only")
        }
        guard let reload = sources.reload else {
            return .error(503, "this daemon does not reload now (starting, stopping, or run without a configuration file)")
        }
        let box = SyncLock<StatusReloadResult?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Request-scoped: this connection's thread (not a task) waits for it below, and the
        // reload does not throw; its result is the answer.
        Task {
            let result = await reload()
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        let result = box.withLock { $0 } ?? StatusReloadResult(ok: false, applied: false, errors: ["the reload ended without a result"])
        var response = HTTPServerResponse(status: result.ok ? 200 : result.applied ? 500 : 422, headers: [("Content-Type", "application/json; charset=utf-8")],
                                          body: result.json())
        response.setHeader("Cache-Control", "no-store")
        return response
    }

    private func report() -> StatusReport {
        sources.report(now: now(), streams: hub.counts, process: ProcessStatistics.current())
    }
}

