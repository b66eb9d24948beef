import Foundation

/// What the daemon tells its host once it has started.
public struct DaemonStarted: Sendable, Hashable {
    /// The embedded sandbox's URL, when one was started.
    public var sandboxURL: URL?
    /// The status endpoint's URL (`http://127.0.0.1:8420/`), when the config has an `http` section.
    public var statusURL: URL?
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

/// Why the daemon begins to stop, as it tells its host.
public enum DaemonStopping: Sendable, Hashable {
    /// SIGINT or SIGTERM (its number) came: the parts stop in reverse order, draining.
    case signal(Int32)
    /// The signal came again, over a second after the first: every part is cancelled instead
    /// of draining. (`herald run` exits at once.)
    case signalAgain(Int32)
    /// The run's duration passed.
    case timeElapsed
    /// The task running the daemon was cancelled.
    case cancelled
    /// The named part (`loaders.home`, `subscribers.archive`, `sandbox`) failed.
    case failed(String)
}
