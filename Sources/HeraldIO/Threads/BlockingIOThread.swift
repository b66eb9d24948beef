import Dispatch
import Foundation
import HeraldSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A dedicated thread that runs blocking work (`write`, `fsync`, `rename`, a directory's
/// `fsync`) one job at a time, in the order the jobs were submitted, so that none of it runs on
/// Swift's cooperative pool, whose few threads every task shares.
///
/// ``submit(_:)`` only queues the job and never blocks, so it may be called from anywhere,
/// including a publisher's synchronous `post`; ``run(_:)`` suspends the calling task (cheaply)
/// until the job has run on the thread. Jobs run strictly first in, first out: a job submitted
/// after another starts after that one has finished, which is what lets two writers sharing a
/// thread order their writes: the daemon makes one such thread for its durable state and hands
/// it to both the post scheduler's outbox and the loaders' state store, so a loader's state is
/// never on the disk before the post intents its announcement queued.
///
/// The thread starts with the first job and ends when this object is released, after the jobs
/// already queued. `Sendable`: its state is behind a lock.
public final class BlockingIOThread: Sendable {
    /// The thread's name (seen in a debugger and in `/proc/<pid>/task/*/comm`).
    public let name: String
    private let queue: JobQueue
    private let heldCount = SyncLock(0)

    /// A thread for blocking work; it is started by the first job.
    public init(name: String) {
        self.name = name
        self.queue = JobQueue()
    }

    deinit {
        queue.close()
    }

    /// Records that a job on this thread could not make its work durable and holds it in memory
    /// (a post intent the outbox refused). While anything is held, work that must never get
    /// ahead of it (a loader's state, which would say the item was handled) refuses to be saved.
    public func hold() { heldCount.withLock { $0 += 1 } }

    /// Ends `count` holds: the held work was written, or can no longer be lost by a later save.
    public func release(_ count: Int = 1) { heldCount.withLock { $0 = max(0, $0 - count) } }

    /// How much work is held in memory for want of the disk.
    public var holds: Int { heldCount.withLock { $0 } }

    /// Queues `job` and returns at once; the job runs on the thread after every job submitted
    /// before it. Its result is ``Pending/value``.
    @discardableResult
    public func submit<T: Sendable>(_ job: @escaping @Sendable () -> T) -> Pending<T> {
        let pending = Pending<T>()
        queue.push(name: name) { pending.complete(job()) }
        return pending
    }

    /// Runs `job` on the thread and returns what it returned or rethrows what it threw; the
    /// calling task is suspended meanwhile, and its thread is free for other tasks. Cancelling
    /// the caller does not stop the job.
    public func run<T: Sendable, E: Error>(_ job: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await submit { () -> Result<T, E> in
            do throws(E) { return .success(try job()) } catch { return .failure(error) }
        }.value
        return try result.get()
    }

    /// Whether the caller is running on this thread (a job, or a test asking from one).
    public var isCurrent: Bool { queue.isCurrentThread }

    /// Jobs submitted and not finished yet (the one running included; a job counts until it
    /// has returned to the thread, so a caller of ``run(_:)`` may resume a moment before).
    public var pendingJobs: Int { queue.pendingJobs }

    /// Returns once at least `count` jobs are submitted and not finished (tests use it to know
    /// a job is queued behind one that is parked).
    public func waitForPendingJobs(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.whenPending(atLeast: count) { continuation.resume() }
        }
    }

    /// The result of a submitted job, to be awaited.
    public final class Pending<T: Sendable>: Sendable {
        private enum State {
            case waiting([CheckedContinuation<T, Never>])
            case done(T)
        }
        private let state = SyncLock<State>(.waiting([]))

        init() {}

        /// The job's result, once it has run.
        public var value: T {
            get async {
                await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
                    let ready = state.withLock { state -> T? in
                        switch state {
                        case .done(let value): return value
                        case .waiting(var waiters):
                            waiters.append(continuation)
                            state = .waiting(waiters)
                            return nil
                        }
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
        }

        /// Whether the job has run.
        public var isDone: Bool {
            state.withLock { if case .done = $0 { true } else { false } }
        }

        fileprivate func complete(_ value: T) {
            let waiters = state.withLock { state -> [CheckedContinuation<T, Never>] in
                guard case .waiting(let waiters) = state else { return [] }
                state = .done(value)
                return waiters
            }
            for waiter in waiters { waiter.resume(returning: value) }
        }
    }
}

/// The jobs and the thread that runs them; the thread holds this, not the ``BlockingIOThread``,
/// so releasing that ends the thread.
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var pending = 0
        var started = false
        var closed = false
        var thread: pthread_t?
        var watchers: [(count: Int, notify: @Sendable () -> Void)] = []
    }
    private let state = SyncLock(State())
    // One signal per job, and one at close: the thread takes one job per signal.
    private let wake = DispatchSemaphore(value: 0)

    func push(name: String, _ job: @escaping @Sendable () -> Void) {
        let (start, ready) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            state.jobs.append(job)
            state.pending += 1
            let pending = state.pending
            let ready = state.watchers.filter { $0.count <= pending }.map(\.notify)
            state.watchers.removeAll { $0.count <= pending }
            defer { state.started = true }
            return (!state.started, ready)
        }
        ready.forEach { $0() }
        if start {
            NamedThread.start(name) { [self] in loop() }
        }
        wake.signal()
    }

    func close() {
        state.withLock { $0.closed = true }
        wake.signal()
    }

    var pendingJobs: Int { state.withLock { $0.pending } }

    func whenPending(atLeast count: Int, _ notify: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.pending < count else { return true }
            state.watchers.append((count, notify))
            return false
        }
        if now { notify() }
    }

    var isCurrentThread: Bool {
        let me = pthread_self()
        return state.withLock { state in state.thread.map { pthread_equal($0, me) != 0 } ?? false }
    }

    private func loop() {
        let me = pthread_self()
        state.withLock { $0.thread = me }
        while true {
            wake.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.head < state.jobs.count else { return nil }
                // Released as it is taken: a job's captures (a batch's buffer) must not outlive it.
                let job = state.jobs[state.head]
                state.jobs[state.head] = nil
                state.head += 1
                // Drop what ran once half the array is done, so the array does not grow forever.
                if state.head >= 64, state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let job else {
                if state.withLock({ $0.closed }) { return }
                continue
            }
            job()
            state.withLock { $0.pending -= 1 }
        }
    }
}
