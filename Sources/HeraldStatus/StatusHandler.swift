import Foundation
import HeraldHTTP

/// Answers the status endpoint's paths, on the server's connection threads (reading `/proc` and
/// the parts' snapshots there, never on the cooperative pool): `GET` (and `HEAD`) only, `405`
/// with `Allow` for another method (and for `CONNECT`, whatever it names), `404` for another path.
struct StatusHandler: HTTPRequestHandler {
    let sources: StatusSources
    let hub: EventStreamHub
    let now: @Sendable () -> Date

    static let paths: Set<String> = ["/", "/metrics", "/status", "/healthz", "/readyz", "/events"]

    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let path = request.path
        // CONNECT names a host, not a path here: the endpoint is no proxy.
        guard request.method != "CONNECT" else {
            return .error(405, "CONNECT is not served; every path answers GET and HEAD only", headers: [("Allow", "GET, HEAD")])
        }
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

    private func report() -> StatusReport {
        sources.report(now: now(), streams: hub.counts, process: ProcessStatistics.current())
    }
}
