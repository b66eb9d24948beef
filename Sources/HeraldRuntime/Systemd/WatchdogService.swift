import Herald
import HeraldLifecycle
import HeraldSync

/// Keeps systemd's watchdog fed while the daemon works: every ``SystemdNotifier/watchdogInterval``
/// it publishes a ``WatchdogHeartbeat`` on the bus, and `WATCHDOG=1` is sent only by the task
/// that reads the heartbeats from their own bounded mailbox, for each one that comes through,
/// and only while the loaders are alive (``LoaderLiveness``). A stuck bus or pool (a heartbeat
/// not delivered), a stuck check, or a dead loader stops the beats, and systemd restarts the
/// daemon; a timer alone would beat through all of them. The mailbox keeps the last 4 beats, so
/// beats resume once the delivery does.
final class WatchdogService: Service {
    private let interval: Duration
    private let bus: EventBus
    private let loadersAlive: @Sendable () async -> Bool
    private let sleep: @Sendable (Duration) async throws -> Void
    private let send: @Sendable (String) -> Void

    /// - Parameters:
    ///   - loadersAlive: asked once per heartbeat delivered; `WATCHDOG=1` only when it says yes.
    ///   - sleep: waits `interval` (the daemon's clock; a manual one in tests).
    ///   - send: sends a notification (``SystemdNotifier/send(_:)``).
    init(interval: Duration, bus: EventBus, loadersAlive: @escaping @Sendable () async -> Bool,
         sleep: @escaping @Sendable (Duration) async throws -> Void, send: @escaping @Sendable (String) -> Void) {
        self.interval = interval
        self.bus = bus
        self.loadersAlive = loadersAlive
        self.sleep = sleep
        self.send = send
    }

    func run() async throws {
        let heartbeats = try bus.events(of: WatchdogHeartbeat.self, name: "herald.watchdog", capacity: 4, overflow: .dropOldest)
        defer { heartbeats.subscription.cancel() }
        announceStarted()
        let (send, loadersAlive) = (send, loadersAlive)
        await withTaskGroup(of: Void.self) { group in
            // The beat: only for a heartbeat the bus delivered, one at a time.
            group.addTask {
                for await _ in heartbeats {
                    if await loadersAlive() { send("WATCHDOG=1") }
                }
            }
            try? await cancelWhenGracefulShutdown { [bus, interval, sleep] in
                var beat = 0
                while !Task.isCancelled {
                    beat += 1
                    _ = try? bus.post(WatchdogHeartbeat(beat: beat))
                    try await sleep(interval)
                }
            }
            group.cancelAll()
        }
    }
}
