import Foundation
import HeraldLoaders

/// What "the loaders are alive" means to the systemd watchdog (``WatchdogService``): every
/// loader of the running configuration has its schedule running (a member of the daemon's
/// loader set: its task has not ended or thrown), and no schedule is stuck, that is waiting
/// for a run that was due more than `grace` (the whole watchdog timeout) ago. A load in flight
/// counts as alive however long it takes (a service's `timeout` bounds it, not the watchdog); a
/// schedule backing off or waiting out a rate limit is alive, its next run being in the future.
///
/// On a cluster node a loader runs on the node holding its lease, so there the loaders are not
/// checked (the heartbeat's trip through the bus still is).
struct LoaderLiveness: Sendable {
    /// The loader ids the configuration names.
    var ids: [String]
    /// Whether `loaders.<id>` runs.
    var running: @Sendable (String) -> Bool
    /// The schedule's snapshot of loader `id`, if it has a monitor.
    var snapshot: @Sendable (String) -> ScheduleSnapshot?

    /// Why the loaders are not alive at `now` (the first problem), or nil when they are.
    func problem(now: Date, grace: Duration) -> String? {
        let graceSeconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        for id in ids.sorted() {
            guard running(id) else { return "loaders.\(id) does not run" }
            guard let snapshot = snapshot(id) else { continue }
            if snapshot.state == .stopped { return "loaders.\(id): its schedule stopped" }
            if snapshot.state == .waiting, let due = snapshot.nextRun, now.timeIntervalSince(due) > graceSeconds {
                return "loaders.\(id): its run due at \(due) has not started"
            }
        }
        return nil
    }
}
