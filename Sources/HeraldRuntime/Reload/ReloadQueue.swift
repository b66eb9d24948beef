import HeraldStatus
import HeraldSync

/// Runs reloads one at a time, coalescing the requests that come while one runs (see
/// ``ReloadMachine``). Signals ``trigger()``; `POST /-/reload` calls ``request()`` and waits for
/// the result of a reload that started after it asked.
final class ReloadQueue: Sendable {
    private typealias Waiter = CheckedContinuation<StatusReloadResult, Never>

    private let machine = SyncLock(ReloadMachine<Waiter>())
    private let perform: @Sendable () async -> StatusReloadResult
    private let runningTask = SyncLock<Task<Void, Never>?>(nil)

    /// A queue running `perform` for each reload.
    init(perform: @escaping @Sendable () async -> StatusReloadResult) {
        self.perform = perform
    }

    /// Asks for a reload and returns its result.
    func request() async -> StatusReloadResult {
        await withCheckedContinuation { (waiter: Waiter) in
            submit(waiter)
        }
    }

    /// Asks for a reload without waiting for it (a signal).
    func trigger() {
        submit(nil)
    }

    /// Starts no more reloads; returns once the one running (if any) has ended.
    func close() async {
        let (running, refused) = machine.withLock { $0.close() }
        refused.forEach { $0.resume(returning: Self.stopping) }
        guard running else { return }
        await runningTask.withLock { $0 }?.value
    }

    private static let stopping = StatusReloadResult(ok: false, applied: false, errors: ["the daemon is stopping"])

    /// Hands `waiter` to the machine; starts the reloads when it says so.
    ///
    /// The reloads run in an unstructured task: a request comes from a signal or an HTTP
    /// connection's thread, not from a task that could hold a child. It does not outlive the
    /// ``ReloadService``'s run, whose ``close()`` awaits it, and nothing it does can vanish:
    /// `perform` does not throw, and its result goes to every waiter. The task is made and kept
    /// under the machine's lock, so a ``close()`` that finds a reload running finds its task.
    private func submit(_ waiter: Waiter?) {
        let refused = machine.withLock { state -> Bool in
            switch state.request(waiter) {
            case .start(let waiters):
                let task = Task { [self] in
                    var serving: [Waiter]? = waiters
                    while let current = serving {
                        let result = await perform()
                        current.forEach { $0.resume(returning: result) }
                        serving = machine.withLock { $0.finished() }
                    }
                }
                runningTask.withLock { $0 = task }
                return false
            case .wait:
                return false
            case .refuse:
                return true
            }
        }
        if refused { waiter?.resume(returning: Self.stopping) }
    }
}
