/// How important a log line is; a log subscriber prints its level and above.
public enum LogLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Everything, including routine bus traffic.
    case debug
    /// Loads finished, items found.
    case info
    /// Loads failed, events dropped, state set aside.
    case warning
    /// Subscribers failing.
    case error

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
    }

    /// Orders by importance.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// How a log line is written.
public enum LogFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// `2026-01-02T03:04:05.678Z INFO  loader.home.finished  home: 20 statuses, 3 new`
    case text
    /// `time=… level=info topic=loader.home.finished msg="home: 20 statuses, 3 new" new=3`
    case logfmt
    /// One JSON object per line.
    case json
}
