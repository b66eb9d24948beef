extension PostScheduler {
    /// Suspends until nothing waits: no post waiting or being sent and no intent held (the
    /// ``snapshot``'s `waiting` empty and `held` zero); returns at once when nothing does.
    /// Cancelling the caller ends the wait.
    ///
    /// A post's outcome (`post.<rule>.sent` / `.failed`) is published before the post leaves
    /// `waiting`, so a caller that counts the outcomes on the bus waits here, then drains its
    /// subscription: every outcome has been routed to it by then.
    package func waitUntilIdle() async {
        let id = state.withLock { state -> UInt64 in
            state.nextIdleWaiter += 1
            return state.nextIdleWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                // The check and the registration are one step under the lock that every change
                // of `waiting` and `held` takes: no wake-up is lost between them.
                let now = state.withLock { state -> Bool in
                    if Self.isIdle(state) || Task.isCancelled { return true }
                    state.idleWaiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.idleWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Resumes the ``waitUntilIdle()`` callers when nothing waits.
    func resumeIdleWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard Self.isIdle(state), !state.idleWaiters.isEmpty else { return [] }
            defer { state.idleWaiters = [:] }
            return Array(state.idleWaiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    private static func isIdle(_ state: State) -> Bool {
        state.waiting.isEmpty && state.held == 0
    }
}
