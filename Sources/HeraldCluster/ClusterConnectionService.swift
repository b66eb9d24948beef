import Herald
import HeraldLifecycle
import HeraldSync

/// The cluster connection as the first cluster service of the daemon's group: it connects (and
/// provisions) when the group starts it, hands the backend to the services after it, publishes
/// the connection's reports on the bus (`cluster.connection.<kind>`), and closes the
/// connection when the group stops it, after every service that uses it.
///
/// Under ``ClusterSettings/Startup/fail`` it tries for ``ClusterSettings/connectWait`` (with
/// backoff) and then fails the group, naming every server's error (`herald` exits 1); under
/// ``ClusterSettings/Startup/wait`` it tries for as long as it takes, and the services before
/// it (the log, the archive) run meanwhile. A stream or bucket that exists with other settings
/// is never retried: it fails the group at once.
public final class ClusterConnectionService<C: Clock>: Service, Sendable where C.Duration == Duration {
    private let settings: ClusterSettings
    private let connector: ClusterConnector
    private let bus: EventBus
    private let clock: C
    private let connected = SyncLock<(any ClusterBackend)?>(nil)
    private let down = SyncLock<String?>("not connected yet")

    /// A connection service.
    public init(settings: ClusterSettings, connector: @escaping ClusterConnector, bus: EventBus, clock: C) {
        self.settings = settings
        self.connector = connector
        self.bus = bus
        self.clock = clock
    }

    /// The backend, once connected (the services after this one are made after that).
    public var backend: (any ClusterBackend)? { connected.withLock { $0 } }

    /// Why the node is not connected to NATS now (nil while it is): the status endpoint's
    /// `/readyz` answers 503 with it.
    public var notConnectedReason: String? { down.withLock { $0 } }

    /// Follows the connection's reports: down on a disconnect or close, up again on a
    /// (re)connect.
    private func track(_ report: ClusterConnectionChanged) {
        switch report.kind {
        case "connected", "reconnected": down.withLock { $0 = nil }
        case "disconnected", "closed", "unreachable": down.withLock { $0 = "the cluster connection is down (\(report.kind): \(report.detail))" }
        default: break
        }
    }

    /// Connects, runs until shut down, closes.
    public func run() async throws {
        let backend = try await connect()
        connected.withLock { $0 = backend }
        down.withLock { $0 = nil }
        let forwarding = Task { [bus, self] in
            for await report in backend.reports {
                track(report)
                _ = try? await bus.publish(report, from: "cluster")
            }
        }
        announceStarted()
        try? await gracefulShutdown()
        await backend.close()
        forwarding.cancel()
        down.withLock { $0 = "stopped" }
    }

    private func connect() async throws -> any ClusterBackend {
        let started = clock.now
        var pause = Duration.milliseconds(100)
        while true {
            do {
                return try await connector(settings)
            } catch {
                let error = error as? ClusterError ?? .refused("\(error)")
                guard error.isUnavailable, !error.isCancelled else { throw ClusterStartError("cluster: \(error.message)") }
                if settings.startup == .fail, started.duration(to: clock.now) + pause > settings.connectWait {
                    throw ClusterStartError("cluster: cannot reach NATS at \(settings.servers.map(\.absoluteString).joined(separator: ", ")) "
                                            + "(tried for \(settings.connectWait)): \(error.message)")
                }
                _ = try? await bus.publish(ClusterConnectionChanged(node: settings.node, kind: "waiting", detail: error.message), from: "cluster")
                try await clock.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }
}

/// Why the cluster connection could not start, in one line.
public struct ClusterStartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line.
    public var description: String

    /// An error.
    public init(_ description: String) {
        self.description = description
    }
}
