import Herald
import HeraldLifecycle
import HeraldSync

/// The cluster connection as the first cluster service of the daemon's group: it connects (and
/// provisions) when the group starts it, hands the backend to the services after it, publishes
/// the connection's reports on the bus (`cluster.connection.<kind>`), and closes the
/// connection when the group stops it, after every service that uses it.
///
/// Under ``ClusterSettings/Startup/fail`` it tries for ``ClusterSettings/connectWait`` (with
/// backoff; the last attempt starts when the wait ends) and then fails the group, naming every
/// server's error and how long it tried (`herald` exits 1); under
/// ``ClusterSettings/Startup/wait`` it tries for as long as it takes, and the services before
/// it (the log, the archive) run meanwhile. A stream or bucket that exists with other settings
/// is never retried: it fails the group at once. Asked to shut down while it tries (a signal at
/// start-up), it stops trying at once, the attempt in flight included, and ends without error.
///
/// Readiness (``notConnectedReason``) follows the connection's reports and what the node's
/// cluster work gets: a lease renewal, a publish or a pull that got no answer makes the node not
/// ready until the next one of its kind is answered.
public final class ClusterConnectionService<C: Clock>: Service, Sendable where C.Duration == Duration {
    private let settings: ClusterSettings
    private let connector: ClusterConnector
    private let bus: EventBus
    private let clock: C
    private let connected = SyncLock<(any ClusterBackend)?>(nil)
    private let down = SyncLock<String?>("not connected yet")
    private let health = ClusterHealth()

    /// A connection service.
    public init(settings: ClusterSettings, connector: @escaping ClusterConnector, bus: EventBus, clock: C) {
        self.settings = settings
        self.connector = connector
        self.bus = bus
        self.clock = clock
    }

    /// The backend, once connected (the services after this one are made after that). Its
    /// publisher, consumers and lease bucket report to this service's readiness.
    public var backend: (any ClusterBackend)? { connected.withLock { $0 } }

    /// Why the node cannot do its cluster work now (nil while it can): the connection is down,
    /// or the last lease renewal, publish or pull of some kind got no answer. The status
    /// endpoint's `/readyz` answers 503 with it.
    public var notConnectedReason: String? { down.withLock { $0 } ?? health.problem }

    /// Follows the connection's reports: down on a disconnect or close, up again on a
    /// (re)connect.
    private func track(_ report: ClusterConnectionChanged) {
        if report.kind.isUp {
            down.withLock { $0 = nil }
        } else if report.kind.isDown {
            down.withLock { $0 = "the cluster connection is down (\(report.kind): \(report.detail))" }
        }
    }

    /// Connects, runs until shut down, closes.
    public func run() async throws {
        let made: any ClusterBackend
        do {
            made = try await cancelWhenGracefulShutdown { try await self.connect() }
        } catch {
            // A signal while the node still tries: nothing started, nothing to report.
            if Task.isShuttingDownGracefully {
                down.withLock { $0 = "stopped before it connected" }
                return
            }
            throw error
        }
        let backend = health.tracking(made)
        connected.withLock { $0 = backend }
        down.withLock { $0 = nil }
        // The reports are forwarded by a child task: it ends (cancelled after the close) before
        // run() returns.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [bus, self] in
                for await report in backend.reports {
                    track(report)
                    _ = try? await bus.publish(report, from: "cluster")
                }
            }
            announceStarted()
            try? await gracefulShutdown()
            await backend.close()
            group.cancelAll()
        }
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
                guard error.isUnavailable, !error.isCancelled, !Task.isCancelled else { throw ClusterStartError("cluster: \(error.message)") }
                let elapsed = started.duration(to: clock.now)
                if settings.startup == .fail, elapsed >= settings.connectWait {
                    throw ClusterStartError("cluster: cannot reach NATS at \(settings.servers.map(\.absoluteString).joined(separator: ", ")) "
                                            + "(tried for \(Self.seconds(elapsed))): \(error.message)")
                }
                _ = try? await bus.publish(ClusterConnectionChanged(node: settings.node, kind: .waiting, detail: error.message), from: "cluster")
                // The last attempt comes when the wait ends, not a whole pause before it.
                let wait = settings.startup == .fail ? min(pause, settings.connectWait - elapsed) : pause
                try await clock.sleep(for: wait)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    /// `3.0 seconds`, to a tenth.
    static func seconds(_ duration: Duration) -> String {
        let tenths = max(0, Int((duration / .milliseconds(100)).rounded()))
        return "\(tenths / 10).\(tenths % 10) seconds"
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
