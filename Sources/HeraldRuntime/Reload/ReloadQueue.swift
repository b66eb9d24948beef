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
            act(machine.withLock { $0.request(waiter) }, waiter: waiter)
        }
    }

    /// Asks for a reload without waiting for it (a signal).
    func trigger() {
        act(machine.withLock { $0.request(nil) }, waiter: nil)
    }

    /// Starts no more reloads; returns once the one running (if any) has ended.
    func close() async {
        let (running, refused) = machine.withLock { $0.close() }
        refused.forEach { $0.resume(returning: Self.stopping) }
        guard running else { return }
        await runningTask.withLock { $0 }?.value
    }

    private static let stopping = StatusReloadResult(ok: false, applied: false, errors: ["the daemon is stopping"])

    private func act(_ action: ReloadMachine<Waiter>.Action, waiter: Waiter?) {
        switch action {
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
        case .wait:
            break
        case .refuse:
            waiter?.resume(returning: Self.stopping)
        }
    }
}
