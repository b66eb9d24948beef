import HeraldSync

/// The slots of a context's async publishes: at most `limit` await their acks; the next caller
/// waits (suspended, first come first served) for a free slot.
///
/// A caller that found the window full is woken once an eighth of it is free (``resumeBelow``),
/// not at every ack: a steady publisher then suspends and resumes once per eighth of the window
/// (32 publishes of 256) and publishes the rest without suspending, rather than hopping
/// executors for every message. (A quarter kept fewer in flight and measured slower.)
final class PublishWindow: Sendable {
    private struct State {
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var drained: [CheckedContinuation<Void, Never>] = []
    }
    let limit: Int
    /// Waiters are resumed once no more than this many are in flight.
    let resumeBelow: Int
    private let state = SyncLock(State())

    init(limit: Int) {
        self.limit = limit
        resumeBelow = limit - max(1, limit / 8)
    }

    /// Takes a slot if one is free and nobody waits for one; never suspends.
    func tryAcquire() -> Bool {
        state.withLock { state -> Bool in
            guard state.inFlight < limit, state.waiters.isEmpty else { return false }
            state.inFlight += 1
            return true
        }
    }

    /// Takes a slot, waiting for one if all are taken. Runs on the caller's executor (no hop
    /// when a slot is free).
    nonisolated(nonsending) func acquire() async {
        if tryAcquire() { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.inFlight < limit, state.waiters.isEmpty {
                    state.inFlight += 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Frees a slot; once an eighth of the window is free, the oldest waiters take the free slots.
    func release() {
        let (next, drained) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [CheckedContinuation<Void, Never>]) in
            state.inFlight -= 1
            if !state.waiters.isEmpty {
                guard state.inFlight <= resumeBelow else { return ([], []) }
                let count = min(state.waiters.count, limit - state.inFlight)
                state.inFlight += count
                let next = Array(state.waiters.prefix(count))
                state.waiters.removeFirst(count)
                return (next, [])
            }
            guard state.inFlight == 0 else { return ([], []) }
            defer { state.drained = [] }
            return ([], state.drained)
        }
        for waiter in next { waiter.resume() }
        for waiter in drained { waiter.resume() }
    }

    /// Publishes waiting for their acks.
    var pending: Int { state.withLock { $0.inFlight } }

    /// Returns once no publish awaits its ack.
    nonisolated(nonsending) func waitUntilEmpty() async {
        if state.withLock({ $0.inFlight == 0 }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.drained.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// The acknowledgement of one async publish, to await when needed. `Sendable`.
public final class JetStreamPublishFuture: Sendable {
    private enum State {
        case waiting([CheckedContinuation<PubAck, any Error>])
        case done(Result<PubAck, any Error>)
    }
    private let state = SyncLock(State.waiting([]))
    /// The subject published to.
    public let subject: String

    init(subject: String) { self.subject = subject }

    /// The stream's ack, or the error (a ``JetStreamError``, or ``NATSError`` `.timeout`). Runs on
    /// the caller's executor, and returns without suspending once the outcome is known.
    nonisolated(nonsending) public var value: PubAck {
        get async throws {
            if let result { return try result.get() }
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PubAck, any Error>) in
                let done = state.withLock { state -> Result<PubAck, any Error>? in
                    switch state {
                    case .done(let result): return result
                    case .waiting(var waiters):
                        waiters.append(continuation)
                        state = .waiting(waiters)
                        return nil
                    }
                }
                if let done { continuation.resume(with: done) }
            }
        }
    }

    /// The outcome, once known (nil while the ack is awaited).
    public var result: Result<PubAck, any Error>? {
        state.withLock { if case .done(let result) = $0 { result } else { nil } }
    }

    func complete(_ result: Result<PubAck, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<PubAck, any Error>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(result)
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
