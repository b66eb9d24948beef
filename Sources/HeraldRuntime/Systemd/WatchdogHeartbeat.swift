import Herald

/// Published on `herald.watchdog` at half the service manager's watchdog interval: the daemon
/// tells systemd it is alive (`WATCHDOG=1`) only once this event came back through the bus.
public struct WatchdogHeartbeat: Event, Hashable {
    /// `herald.watchdog`.
    public static let topic: Topic = "herald.watchdog"
    /// ``topic``.
    public var topic: Topic { Self.topic }

    /// The beat's number since start.
    public var beat: Int

    /// Beat `beat`.
    public init(beat: Int) {
        self.beat = beat
    }
}
