import Herald
import HeraldSubscribers

/// Log summaries of the daemon's own events: a reload applied (info) or refused (error), and
/// the watchdog's heartbeat (debug, so the default log level leaves it out).
public enum DaemonEventSummaries {
    /// ``ConfigReloaded`` and ``WatchdogHeartbeat``; nil for anything else.
    public static let summarizer: EventSummarizer = { envelope in
        switch envelope.event {
        case let reloaded as ConfigReloaded where reloaded.applied:
            let what = reloaded.changes.isEmpty ? "nothing changed" : reloaded.changes.joined(separator: "; ")
            let notes = reloaded.notes.isEmpty ? "" : " (" + reloaded.notes.joined(separator: "; ") + ")"
            return LogRecord(level: reloaded.errors.isEmpty ? .info : .warning,
                             message: "reloaded \(reloaded.path): \(what)\(notes)" + reloaded.errors.map { "; \($0)" }.joined(),
                             fields: [.init("path", reloaded.path), .init("sha1", reloaded.sha1 ?? "")])
        case let reloaded as ConfigReloaded:
            return LogRecord(level: .error,
                             message: "reload of \(reloaded.path) refused, nothing changed: " + reloaded.errors.joined(separator: "; "),
                             fields: [.init("path", reloaded.path), .init("errors", "\(reloaded.errors.count)")])
        case is WatchdogHeartbeat:
            return LogRecord(level: .debug, message: "watchdog heartbeat", fields: [])
        default:
            return nil
        }
    }
}
