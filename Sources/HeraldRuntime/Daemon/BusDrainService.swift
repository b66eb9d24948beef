import Herald
import HeraldLifecycle
import HeraldSync

/// The bus's drain as a service: nothing to start; when the group stops it (after the post
/// schedulers and loaders placed after it, before the subscribers placed before it) it delivers
/// what is queued, within `timeout`, and keeps the report.
final class BusDrainService: Service {
    private let bus: EventBus
    private let timeout: Duration
    private let report = SyncLock<ShutdownReport?>(nil)

    init(bus: EventBus, timeout: Duration) {
        self.bus = bus
        self.timeout = timeout
    }

    /// The drain's report, once drained.
    var shutdownReport: ShutdownReport? { report.withLock { $0 } }

    func run() async throws {
        announceStarted()
        try? await gracefulShutdown()
        let drained = await bus.shutdown(timeout: timeout)
        report.withLock { $0 = drained }
    }
}
