import Herald
import HeraldLifecycle
import HeraldSync

/// Keeps systemd's watchdog fed while the daemon works: every ``SystemdNotifier/watchdogInterval``
/// it publishes a ``WatchdogHeartbeat`` on the bus, and `WATCHDOG=1` is sent only from the
/// heartbeat's queued subscriber, when it comes through, and only while every loader the
/// configuration names still runs. A stuck bus, a stuck pool or a dead loader stops the beats,
/// and systemd restarts the daemon; a timer alone would beat through all of them.
final class WatchdogService: Service {
    private let notifier: SystemdNotifier
    private let interval: Duration
    private let bus: EventBus
    private let loadersAlive: @Sendable () -> Bool
    private let sleep: @Sendable (Duration) async throws -> Void

    init(notifier: SystemdNotifier, interval: Duration, bus: EventBus, loadersAlive: @escaping @Sendable () -> Bool,
         sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.notifier = notifier
        self.interval = interval
        self.bus = bus
        self.loadersAlive = loadersAlive
        self.sleep = sleep
    }

    func run() async throws {
        let (notifier, loadersAlive) = (notifier, loadersAlive)
        let subscription = try bus.subscribe(to: WatchdogHeartbeat.self, name: "herald.watchdog", delivery: .queued(capacity: 4, overflow: .dropOldest)) { _ in
            if loadersAlive() { notifier.send("WATCHDOG=1") }
        }
        defer { subscription.cancel() }
        announceStarted()
        try? await cancelWhenGracefulShutdown { [bus, interval, sleep] in
            var beat = 0
            while !Task.isCancelled {
                beat += 1
                _ = try? bus.post(WatchdogHeartbeat(beat: beat))
                try await sleep(interval)
            }
        }
    }
}
