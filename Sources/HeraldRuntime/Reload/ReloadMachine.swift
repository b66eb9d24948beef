/// Decides when reloads run, so that a storm of requests (SIGHUP sent ten times, several
/// `herald reload` at once) costs at most one reload running and one more after it: every
/// request made while one runs is served by the next, which reads the file as it is then.
///
/// A struct whose methods return what to do; ``ReloadQueue`` keeps it behind a lock and acts.
struct ReloadMachine<Waiter> {
    private enum Phase {
        case idle
        case running(next: [Waiter]?)
        case closed
    }

    /// What the queue does next.
    enum Action {
        /// Start a reload now, serving these waiters.
        case start([Waiter])
        /// Nothing: a reload will serve the request.
        case wait
        /// The queue is closed: answer the waiter (if any) that the daemon is stopping.
        case refuse
    }

    private var phase = Phase.idle

    /// A request (with someone waiting for its result, or none: a signal).
    mutating func request(_ waiter: Waiter?) -> Action {
        let waiters = waiter.map { [$0] } ?? []
        switch phase {
        case .idle:
            phase = .running(next: nil)
            return .start(waiters)
        case .running(let next):
            phase = .running(next: (next ?? []) + waiters)
            return .wait
        case .closed:
            return .refuse
        }
    }

    /// A reload ended: the next one to start, if requests came meanwhile.
    mutating func finished() -> [Waiter]? {
        switch phase {
        case .running(let next?):
            phase = .running(next: nil)
            return next
        case .running(nil):
            phase = .idle
            return nil
        case .idle, .closed:
            return nil
        }
    }

    /// No more reloads start; true when one runs now (the caller waits for it).
    mutating func close() -> (running: Bool, refused: [Waiter]) {
        switch phase {
        case .running(let next):
            phase = .closed
            return (true, next ?? [])
        case .idle, .closed:
            phase = .closed
            return (false, [])
        }
    }

    /// Whether closed (a reload that finishes then does not start another).
    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }
}
