import HeraldSync

/// A one-way gate that any number of tasks wait at: opening it lets every waiter through,
/// abandoning it throws `CancellationError` in each; cancelling a waiter's task does the same
/// for that waiter alone.
final class Gate: Sendable {
    private enum Phase {
        case closed
        case open
        case abandoned
    }

    private struct State {
        var phase = Phase.closed
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = SyncLock(State())

    /// Whether it was opened.
    var isOpen: Bool { state.withLock { $0.phase == .open } }

    /// Lets every waiter, present and future, through. Does nothing once opened or abandoned.
    func open() { settle(.open) }

    /// Makes every waiter, present and future, throw `CancellationError`. Does nothing once
    /// opened or abandoned.
    func abandon() { settle(.abandoned) }

    private func settle(_ phase: Phase) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.phase == .closed else { return [] }
            state.phase = phase
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            if phase == .open { waiter.resume() } else { waiter.resume(throwing: CancellationError()) }
        }
    }

    /// Suspends until the gate opens.
    ///
    /// - Throws: `CancellationError` when the gate is abandoned or the calling task cancelled.
    func wait() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    switch state.phase {
                    case .open: return .success(())
                    case .abandoned: return .failure(CancellationError())
                    case .closed:
                        state.waiters[id] = continuation
                        return nil
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                // Not waiting yet: the wait, when it comes, ends at once. (After it ended, the
                // mark is never read; ids are not reused.)
                if state.phase == .closed { state.cancelled.insert(id) }
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
