import HeraldLifecycle
import HeraldSandbox
import HeraldSync

/// The embedded sandbox as a service: bound and serving once started, stopped (every server
/// thread ended) when the group stops it, last.
final class SandboxService: Service {
    private let settings: SandboxConfiguration
    private let running = SyncLock<Sandbox?>(nil)

    init(settings: SandboxConfiguration) {
        self.settings = settings
    }

    /// The running sandbox: set before the service announces itself, so every service started
    /// after it sees it.
    var sandbox: Sandbox? { running.withLock { $0 } }

    func run() async throws {
        let sandbox: Sandbox
        do {
            sandbox = try await Sandbox.start(settings)
        } catch {
            throw DaemonError("cannot start the sandbox: \(error)")
        }
        running.withLock { $0 = sandbox }
        announceStarted()
        try? await gracefulShutdown()
        await sandbox.stop()
    }
}
