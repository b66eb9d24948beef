import Foundation
import HeraldIO
import Herald
import HeraldStatus
import HeraldSync

extension HeraldDaemon {
    /// This daemon with another configuration (same clocks, writers and hooks).
    func reconfigured(_ configuration: HeraldConfiguration) -> HeraldDaemon {
        var copy = self
        copy.configuration = configuration
        return copy
    }

    /// One reload: tells systemd, reads and validates the file (on a thread of its own), applies
    /// it or changes nothing, and reports the outcome on the bus, the status endpoint, systemd's
    /// status line and to `reloaded`.
    func reload(_ runtime: DaemonRuntime, from file: URL, host: DaemonHost,
                reloaded: @Sendable (ConfigReloaded) -> Void) async -> StatusReloadResult {
        host.notifier?.reloading()
        runtime.sources.updateConfig { $0.reloads += 1 }
        let loader = host.configLoader
        let read = await BlockingIOThread(name: "herald.config-read").run { () -> Result<HeraldConfiguration, ConfigError> in
            do throws(ConfigError) {
                return .success(try loader.load(contentsOf: file))
            } catch {
                return .failure(error)
            }
        }
        let result: StatusReloadResult
        let event: ConfigReloaded
        switch read {
        case .failure(let error):
            let errors = error.issues.map(\.description)
            runtime.sources.updateConfig { status in
                status.lastReloadSuccessful = false
                status.lastErrors = errors
            }
            event = ConfigReloaded(applied: false, path: file.path, sha1: nil, changes: [], errors: errors, notes: [])
            result = StatusReloadResult(ok: false, applied: false, errors: errors)
        case .success(let configuration):
            let applied = await runtime.apply(configuration)
            let when = now()
            runtime.sources.updateConfig { status in
                status.sha1 = configuration.source?.sha1
                status.loadedAt = configuration.source?.loadedAt
                status.lastReloadSuccessful = true
                status.lastSuccess = when
                status.lastErrors = applied.errors
            }
            event = ConfigReloaded(applied: true, path: file.path, sha1: configuration.source?.sha1, changes: applied.changes,
                                   errors: applied.errors, notes: applied.notes)
            result = StatusReloadResult(ok: applied.errors.isEmpty, applied: true, errors: applied.errors, changes: applied.changes,
                                        notes: applied.notes)
        }
        _ = try? runtime.bus.post(event, from: Sender("herald"))
        reloaded(event)
        let line = event.applied ? Self.statusLine(runtime.configuration) : "reload failed (\(event.errors.count) errors); "
            + Self.statusLine(runtime.configuration)
        host.notifier?.send("READY=1\nSTATUS=" + line)
        return result
    }

    /// systemd's one-line status: `3 loaders, 2 subscribers; config 1a2b3c4d`.
    static func statusLine(_ configuration: HeraldConfiguration) -> String {
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        var line = "\(count(configuration.loaders.count, "loader")), \(count(configuration.subscribers.count, "subscriber"))"
        if let sha1 = configuration.source?.sha1 { line += "; config \(sha1.prefix(8))" }
        return line
    }
}
