import Foundation
import HeraldLifecycle
import HeraldSync

/// Runs a load on a ``SchedulePolicy`` over any clock: once at start, then as
/// ``ScheduleState`` decides, until the task running ``run()`` is cancelled or, in a
/// `ServiceGroup`, asked to shut down gracefully; either way the load in flight is cancelled.
///
/// After a success the next tick is the previous tick plus the pause (no drift from the load's
/// duration; if that time has passed, at once). After a failure the pause counts from the
/// failure. Loads never overlap: the next starts only after the previous returned.
public struct LoaderSchedule<C: Clock>: Service where C.Duration == Duration {
    /// The policy.
    public let policy: SchedulePolicy
    private let clock: C
    private let seed: UInt64
    private let now: @Sendable () -> Date
    private let load: @Sendable () async -> LoadOutcome
    private let monitor: ScheduleMonitor?

    /// Creates a schedule.
    ///
    /// - Parameters:
    ///   - clock: the clock pauses are measured on (a manual clock in tests).
    ///   - seed: fixes the jitter.
    ///   - now: the wall-clock time, to turn a rate limit's reset date into a pause.
    ///   - monitor: told of each load and of the next due time (a status page reads it).
    ///   - load: one load (a loader's ``Loader/load()``).
    public init(policy: SchedulePolicy, clock: C, seed: UInt64 = 0, now: @escaping @Sendable () -> Date = { Date() },
                monitor: ScheduleMonitor? = nil, load: @escaping @Sendable () async -> LoadOutcome) {
        self.monitor = monitor
        self.policy = policy
        self.clock = clock
        self.seed = seed
        self.now = now
        self.load = load
    }

    /// Loads at start and on every tick until cancelled or shut down.
    ///
    /// In a `ServiceGroup` it announces itself at once and makes its first load once every
    /// service of the group has started (so a program's "running" line comes first).
    public func run() async {
        announceStarted()
        _ = try? await cancelWhenGracefulShutdown {
            try await waitUntilGroupStarted()
            await self.loop()
        }
        monitor?.stopped()
    }

    private func loop() async {
        var state = ScheduleState(policy: policy, seed: seed)
        var tick = clock.now
        while !Task.isCancelled {
            monitor?.loadStarted(at: now())
            let outcome = await load()
            if Task.isCancelled { return }
            let ended = now()
            let pause = state.pause(after: outcome, now: ended)
            monitor?.loadEnded(outcome, at: ended, consecutiveFailures: state.consecutiveFailures)
            if case .failed(let error) = outcome, error.stopsLoader {
                // Asking again cannot help (a revoked token): no more loads until the program
                // stops. Not returning: a service that ends on its own would stop the group.
                monitor?.stopped()
                while (try? await clock.sleep(until: clock.now.advanced(by: .seconds(86_400)), tolerance: nil)) != nil {}
                return
            }
            let current = clock.now
            tick = outcome.succeeded ? tick.advanced(by: pause) : current.advanced(by: pause)
            if tick < current { tick = current }
            if let monitor {
                monitor.waiting(until: ended.addingTimeInterval(current.duration(to: tick).timeInterval))
            }
            do {
                try await clock.sleep(until: tick, tolerance: nil)
            } catch {
                return
            }
        }
    }
}
