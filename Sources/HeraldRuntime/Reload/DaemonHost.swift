import Foundation

/// What a daemon may do for the program hosting it beyond running: reload its configuration
/// file (on SIGHUP and `POST /-/reload`) and speak systemd's notify protocol.
public struct DaemonHost: Sendable {
    /// The configuration file reloads read (nil: the daemon does not reload).
    public var configFile: URL?
    /// How reloads read it (secrets from its environment).
    public var configLoader: ConfigLoader
    /// Whether SIGHUP reloads (the signal is trapped from the start of the run).
    public var reloadOnSIGHUP: Bool
    /// Where readiness, reloads, stopping, the watchdog and the status line are told (nil: nowhere).
    public var notifier: SystemdNotifier?

    /// A host: no reloads, no notifications by default.
    public init(configFile: URL? = nil, configLoader: ConfigLoader = ConfigLoader(), reloadOnSIGHUP: Bool = false,
                notifier: SystemdNotifier? = nil) {
        self.configFile = configFile
        self.configLoader = configLoader
        self.reloadOnSIGHUP = reloadOnSIGHUP
        self.notifier = notifier
    }
}
