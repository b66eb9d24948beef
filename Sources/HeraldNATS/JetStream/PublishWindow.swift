import HeraldSync

/// The slots of a context's async publishes: at most `limit` await their acks; the next caller
/// waits (suspended, first come first served) for a free slot.
final class PublishWindow: Sendable {
    private struct State {
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var drained: [CheckedContinuation<Void, Never>] = []
    }
    let limit: Int
    private let state = SyncLock(State())

    init(limit: Int) { self.limit = limit }

    /// Takes a slot, waiting for one if all are taken.
    func acquire() async {
        let acquired = state.withLock { state -> Bool in
            guard state.inFlight < limit, state.waiters.isEmpty else { return false }
            state.inFlight += 1
            return true
        }
        if acquired { return }
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

    /// Frees a slot: the oldest waiter takes it over.
    func release() {
        let (next, drained) = state.withLock { state -> (CheckedContinuation<Void, Never>?, [CheckedContinuation<Void, Never>]) in
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), []) }
            state.inFlight -= 1
            guard state.inFlight == 0 else { return (nil, []) }
            defer { state.drained = [] }
            return (nil, state.drained)
        }
        next?.resume()
        for waiter in drained { waiter.resume() }
    }

    /// Publishes waiting for their acks.
    var pending: Int { state.withLock { $0.inFlight } }

    /// Returns once no publish awaits its ack.
    func waitUntilEmpty() async {
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

    /// The stream's ack, or the error (a ``JetStreamError``, or ``NATSError`` `.timeout`).
    public var value: PubAck {
        get async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PubAck, any Error>) in
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
