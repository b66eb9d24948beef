import HeraldSync

/// A clock that moves only when a test says so, for code that takes a `Clock` (schedules,
/// retries, leases, timeouts): a test of a five-minute schedule runs at once and never depends
/// on how busy the machine is.
///
/// Sleepers wait until ``advance(by:)`` or ``advanceToNextDeadline()`` passes their deadline;
/// ``waitForSleepers(_:)`` lets a test wait (without time passing) until the code under test
/// has gone to sleep, so it can move time knowing what it wakes:
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(60)) }
/// await clock.waitForSleepers()
/// clock.advance(by: .seconds(60))   // the sleep returns
/// ```
///
/// With `advancesOnSleep`, a sleep instead moves time to its own deadline and returns at once,
/// and ``sleeps`` lists what was asked: for code that polls or backs off, run on virtual time.
public final class ManualClock: Clock, Sendable {
    /// A clock at offset zero; with `advancesOnSleep`, each sleep moves time to its deadline
    /// and returns at once.
    public init(advancesOnSleep: Bool = false) {
        self.advancesOnSleep = advancesOnSleep
    }

    /// A point in the clock's time: how far it is from the clock's start.
    public struct Instant: InstantProtocol, Hashable {
        /// The time since the clock's start.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let advancesOnSleep: Bool

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var requested: [Duration] = []
    }

    private let state = SyncLock(State())

    /// The clock's time now.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: any duration can be slept.
    public var minimumResolution: Duration { .zero }

    /// Every sleep asked for so far, as the time from then to its deadline.
    public var sleeps: [Duration] { state.withLock { $0.requested } }

    /// Sleeps until ``advance(by:)`` passes `deadline` (or, with `advancesOnSleep`, moves time
    /// to it and returns).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        if advancesOnSleep {
            try Task.checkCancellation()
            state.withLock { state in
                state.requested.append(state.now.duration(to: deadline))
                if deadline > state.now { state.now = deadline }
            }
            return
        }
        state.withLock { $0.requested.append($0.now.duration(to: deadline)) }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resumeNow, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if deadline <= state.now { return (true, []) }
                    if Task.isCancelled { return (true, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (false, Self.takeSatisfiedWatchers(&state))
                }
                watchers.forEach { $0.resume() }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            due.keys.forEach { state.sleepers.removeValue(forKey: $0) }
            return due.sorted { $0.value.deadline < $1.value.deadline }.map(\.value)
        }
        woken.forEach { $0.continuation.resume() }
    }

    /// Moves time to the earliest sleeper's deadline (and wakes it).
    public func advanceToNextDeadline() {
        guard let next = nextDeadline else { return }
        advance(by: now.duration(to: next))
    }

    /// The earliest deadline of the current sleepers.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Suspends until at least `count` tasks are sleeping on this clock.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeSatisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = state.sleepers.count
        let satisfied = state.watchers.filter { $0.count <= count }.map(\.continuation)
        state.watchers.removeAll { $0.count <= count }
        return satisfied
    }
}
