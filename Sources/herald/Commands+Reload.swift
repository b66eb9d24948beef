import Foundation
import HeraldRuntime
import HeraldStatus

extension Commands {
    /// `herald reload`: asks the running daemon to reload its configuration file and prints
    /// what it did: 0 applied, 1 not reached (or applied with parts that failed), 2 the file is
    /// invalid (every problem printed with its JSON path; nothing changed).
    static func reload(url: String?, config path: String) async -> Int32 {
        let base: URL
        let result: StatusReloadResult
        do {
            if let url {
                base = try StatusQuery.baseURL(from: url)
            } else {
                guard let configuration = validConfiguration(path) else { return 2 }
                base = try StatusQuery.baseURL(for: configuration, path: path)
            }
            result = try await ReloadRequest.send(to: base)
        } catch {
            Terminal.err("herald: \(error.description)")
            return error.isUsage ? 2 : 1
        }
        guard result.applied else {
            let count = result.errors.count
            Terminal.err("herald: reload refused, nothing changed (\(count) \(count == 1 ? "error" : "errors")):")
            for error in result.errors { Terminal.err("  \(error)") }
            return 2
        }
        Terminal.out(result.changes.isEmpty ? "reloaded: nothing changed" : "reloaded:")
        for change in result.changes { Terminal.out("  \(change)") }
        for note in result.notes { Terminal.out("  note: \(note)") }
        for error in result.errors { Terminal.err("herald: \(error)") }
        return result.ok ? 0 : 1
    }

    /// `herald check --print`: the effective configuration, defaults filled in, secrets masked.
    static func printConfiguration(config path: String) -> Int32 {
        guard let configuration = validConfiguration(path) else { return 2 }
        Terminal.outLines(EffectiveConfig.json(configuration))
        return 0
    }

    /// A reload's outcome as `herald run` tells it on standard error.
    static func report(_ reloaded: ConfigReloaded) {
        if reloaded.applied {
            let sha = reloaded.sha1.map { " (sha1 \($0.prefix(12)))" } ?? ""
            Terminal.err("herald: reloaded \(reloaded.path)\(sha): " + (reloaded.changes.isEmpty ? "nothing changed" : reloaded.changes.joined(separator: "; ")))
            for note in reloaded.notes { Terminal.err("herald: note: \(note)") }
            for error in reloaded.errors { Terminal.err("herald: reload: \(error)") }
        } else {
            Terminal.err("herald: reload of \(reloaded.path) refused, nothing changed (\(reloaded.errors.count) \(reloaded.errors.count == 1 ? "error" : "errors")):")
            for error in reloaded.errors { Terminal.err("  \(error)") }
        }
    }
}
