import Foundation

/// What the daemon tells its host once it has started.
public struct DaemonStarted: Sendable, Hashable {
    /// The embedded sandbox's URL, when one was started.
    public var sandboxURL: URL?
    /// The loaders running, by id.
    public var loaders: [String]
    /// The subscribers running, by name.
    public var subscribers: [String]
}

/// How a run ended.
public struct DaemonStopped: Sendable, Hashable {
    /// Whether the bus delivered everything queued before its deadline.
    public var drained: Bool
    /// Events the bus had to discard at shutdown.
    public var discarded: Int
}
