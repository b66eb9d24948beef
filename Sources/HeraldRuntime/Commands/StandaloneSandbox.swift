import Foundation
import HeraldLifecycle
import HeraldSandbox

/// The sandbox on its own, for `herald sandbox`: the standard settings, or those of a
/// configuration's services and `sandbox` section, on the port asked for. It runs as the one
/// service of a `ServiceGroup`, the shape the daemon has, so signals stop it the same way.
public struct StandaloneSandbox: Sendable {
    /// What ``run(stopOnSignals:started:stopping:)`` tells its host once the port is bound.
    public struct Started: Sendable, Hashable {
        /// Where it listens (`http://127.0.0.1:<port>`).
        public var baseURL: URL
        /// The tenant its BaaS emulator serves.
        public var baasTenant: String
        /// The application id its BaaS emulator expects.
        public var baasApplicationID: String
    }

    private let settings: SandboxConfiguration

    /// A sandbox with the settings and credentials of `configuration` (the standard sandbox's
    /// when nil), on `port` over the configuration's (0 picks a free one).
    public init(configuration: HeraldConfiguration?, port: Int?) {
        var settings = configuration?.sandboxConfiguration() ?? SandboxConfiguration()
        if let port { settings.port = port }
        self.settings = settings
    }

    /// Binds the port and serves until SIGINT or SIGTERM (with `stopOnSignals`) or until the
    /// calling task is cancelled; then stops, every server thread ended.
    ///
    /// - Parameters:
    ///   - started: called once the port is bound.
    ///   - stopping: called when it begins to stop, and why.
    /// - Throws: ``DaemonError`` when the port cannot be bound.
    public func run(stopOnSignals: Bool = false, started: @escaping @Sendable (Started) -> Void = { _ in },
                    stopping: @escaping @Sendable (DaemonStopping) -> Void = { _ in }) async throws(DaemonError) {
        let service = SandboxService(settings: settings)
        let settings = self.settings
        let group = ServiceGroup([.init("sandbox", service)], signals: stopOnSignals ? [.sigint, .sigterm] : []) { event in
            switch event {
            case .started:
                guard let url = service.sandbox?.baseURL else { return }
                started(Started(baseURL: url, baasTenant: settings.baasTenant, baasApplicationID: settings.baasApplicationID))
            case .stopping(let reason): stopping(DaemonStopping(reason))
            case .stoppingAtOnce(let signal): stopping(.signalAgain(signal.rawValue))
            }
        }
        do {
            try await group.run()
        } catch {
            throw error.underlying as? DaemonError ?? DaemonError(error.description)
        }
    }
}
