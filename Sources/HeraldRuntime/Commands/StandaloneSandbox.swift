import Foundation
import HeraldSandbox

/// The sandbox on its own, for `herald sandbox`: the standard settings, or those of a
/// configuration's services and `sandbox` section, on the port asked for.
public struct StandaloneSandbox: Sendable {
    private let sandbox: Sandbox
    /// The tenant its BaaS emulator serves.
    public let baasTenant: String
    /// The application id its BaaS emulator expects.
    public let baasApplicationID: String

    /// Where it listens (`http://127.0.0.1:<port>`).
    public var baseURL: URL { sandbox.baseURL }

    /// Binds the port and starts serving.
    ///
    /// - Parameters:
    ///   - configuration: its settings and credentials come from here (the standard sandbox's
    ///     when nil).
    ///   - port: the port, over the configuration's (0 picks a free one).
    /// - Throws: ``DaemonError`` when the port cannot be bound.
    public static func start(configuration: HeraldConfiguration?, port: Int?) async throws(DaemonError) -> StandaloneSandbox {
        var settings = configuration?.sandboxConfiguration() ?? SandboxConfiguration()
        if let port { settings.port = port }
        do {
            let sandbox = try await Sandbox.start(settings)
            return StandaloneSandbox(sandbox: sandbox, baasTenant: settings.baasTenant, baasApplicationID: settings.baasApplicationID)
        } catch {
            throw DaemonError("cannot start the sandbox: \(error)")
        }
    }

    /// Serves until the calling task is cancelled, then stops (every server thread ended).
    public func run() async {
        await sandbox.run()
    }
}
