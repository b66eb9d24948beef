import Foundation
import HeraldHTTP
import HeraldLifecycle
import HeraldSync

/// The daemon's status endpoint as a service: an ``HTTPServer`` (threads of its own) serving
/// `/metrics` (Prometheus text 0.0.4), `/status` (JSON), `/healthz`, `/readyz`, `/events`
/// (Server-Sent Events of the bus) and `/` (a self-contained live page), from a
/// ``StatusSources``.
///
/// It announces itself once its socket is bound and serving, so ``url`` is known to the services
/// started after it, and stops the server (closing every stream) when the group stops it.
public final class StatusEndpoint: Service {
    /// Bounds for the endpoint's server: 512 connections, of which at most 256 `/events` streams
    /// (so the other 256 are kept for probes, scrapes and the page whatever streams do), small
    /// bodies (every path is a `GET`).
    public static let limits = HTTPServerLimits(maxConnections: 512, maxHeadBytes: 16 * 1024, maxBodyBytes: 64 * 1024,
                                                maxBufferedBodyBytes: 1024 * 1024, headTimeout: .seconds(10), idleTimeout: .seconds(30),
                                                maxStreams: 256)

    private let host: String
    private let port: Int
    private let limits: HTTPServerLimits
    private let sources: StatusSources
    private let hub: EventStreamHub
    private let now: @Sendable () -> Date
    private let serving = SyncLock(Serving())

    private struct Serving {
        var server: HTTPServer?
        var ended = false
        var waiters: [CheckedContinuation<URL?, Never>] = []

        var url: URL? { server.flatMap { URL(string: "http://\($0.host):\($0.port)/") } }

        mutating func takeWaiters() -> [CheckedContinuation<URL?, Never>] {
            defer { waiters = [] }
            return waiters
        }
    }

    /// An endpoint for `host:port` (port 0: any free port).
    ///
    /// - Parameters:
    ///   - streamBuffer: the bytes of events one `/events` client may have waiting before it is
    ///     dropped as too slow.
    ///   - now: the wall-clock time reports are stamped with.
    public init(host: String = "127.0.0.1", port: Int, sources: StatusSources, limits: HTTPServerLimits = StatusEndpoint.limits,
                streamBuffer: Int = EventStreamHub.defaultClientBuffer, now: @escaping @Sendable () -> Date = { Date() }) {
        self.host = host
        self.port = port
        self.limits = limits
        self.sources = sources
        self.hub = EventStreamHub(bus: sources.bus, clientBuffer: streamBuffer)
        self.now = now
    }

    /// `http://host:port/` once serving; nil before (and after a failed start).
    public var url: URL? { serving.withLock { $0.url } }

    /// Returns ``url`` once the endpoint serves, or nil once its run ended without serving.
    public func waitUntilServing() async -> URL? {
        await withCheckedContinuation { continuation in
            let ready = serving.withLock { state -> URL?? in
                if state.server != nil || state.ended { return .some(state.url) }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The running server (tests wait on its snapshot).
    public var httpServer: HTTPServer? { serving.withLock { $0.server } }

    /// The `/events` clients connected now.
    public var streamClients: Int { hub.counts.clients }

    /// The `/events` clients: connected, dropped, bytes waiting for them.
    public var streamCounts: StatusReport.Streams { hub.counts }

    /// Routing steps the event stream took since start (tests compare them).
    var streamRoutingSteps: Int { hub.routingSteps }

    /// Whether `host` is a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Binds, subscribes the event stream to the bus, serves; stops both when asked to.
    ///
    /// - Throws: ``StatusEndpointError`` when the address cannot be bound or the bus refuses
    ///   the stream's subscription.
    public func run() async throws {
        defer {
            let waiters = serving.withLock { state in
                state.ended = true
                return state.takeWaiters()
            }
            waiters.forEach { $0.resume(returning: nil) }
        }
        let started: HTTPServer
        do {
            started = try HTTPServer(name: "herald.http", host: host, port: port, limits: limits,
                                     handler: StatusHandler(sources: sources, hub: hub, now: now, reloadAllowed: Self.isLoopback(host)))
        } catch {
            throw StatusEndpointError("cannot listen on \(host):\(port): \(error)")
        }
        do {
            try hub.start()
        } catch {
            await started.stop()
            throw StatusEndpointError("cannot subscribe /events to the bus: \(error)")
        }
        started.start()
        let (url, waiters) = serving.withLock { state in
            state.server = started
            return (state.url, state.takeWaiters())
        }
        waiters.forEach { $0.resume(returning: url) }
        announceStarted()
        try? await gracefulShutdown()
        hub.stop()
        await started.stop()
    }
}
