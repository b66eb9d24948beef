import Herald
import HeraldCluster
import HeraldSubscribers

/// One-line summaries of the cluster's events for the log subscriber:
/// `todos: node a took the lease`, `cluster: disconnected from 127.0.0.1:4222: …`.
public enum ClusterEventSummaries {
    /// Summarises ``ClusterLeaseChanged``, ``ClusterConnectionChanged``, ``ClusterImportRejected``,
    /// ``ClusterExportProblem``, ``ClusterPostRefused`` and ``RemoteEvent`` (at debug: another node's event, which that
    /// node logs itself); nil for anything else.
    public static let summarizer: EventSummarizer = { envelope in
        switch envelope.event {
        case let lease as ClusterLeaseChanged:
            if lease.change == .acquired {
                return LogRecord(level: .info, message: "\(lease.loader): node \(lease.node) took the lease",
                                 fields: [.init("loader", lease.loader), .init("node", lease.node)])
            }
            return LogRecord(level: .warning, message: "\(lease.loader): node \(lease.node) lost the lease: \(lease.reason ?? "no reason given")",
                             fields: [.init("loader", lease.loader), .init("node", lease.node)])
        case let connection as ClusterConnectionChanged:
            let level: LogLevel = switch connection.kind {
            case .connected, .reconnected, .discovered, .closed: .info
            default: .warning
            }
            return LogRecord(level: level, message: "cluster: \(connection.kind): \(connection.detail)",
                             fields: [.init("node", connection.node), .init("kind", connection.kind.rawValue)])
        case let rejected as ClusterImportRejected:
            return LogRecord(level: .warning, message: "cluster: a message on \(rejected.subject) is not a Herald event: \(rejected.reason)",
                             fields: [.init("subject", rejected.subject), .init("bytes", "\(rejected.bytes)")])
        case let refused as ClusterPostRefused:
            return LogRecord(level: .error, message: "cluster: refused the post intent on \(refused.subject): \(refused.reason)",
                             fields: [.init("subject", refused.subject), .init("key", refused.key ?? "-"), .init("claimedNode", refused.claimedNode ?? "-")])
        case let problem as ClusterExportProblem:
            return LogRecord(level: .warning, message: "cluster: \(problem.eventTopic) \(problem.eventID) \(problem.outcome): \(problem.reason)",
                             fields: [.init("event", problem.eventID), .init("attempts", "\(problem.attempts)")])
        case let remote as RemoteEvent:
            return LogRecord(level: .debug, message: "from node \(remote.node)", fields: [.init("node", remote.node)])
        default:
            return nil
        }
    }
}
