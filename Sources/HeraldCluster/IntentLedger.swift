import HeraldSync

/// Counts post intents on their way to the cluster's post queue, so that a loader's state is
/// saved only after the intents of the items it announced are stored: announce → intents
/// stored → state saved, as the outbox orders it on one machine.
///
/// The intake calls ``begin()`` inline, while the announcement is being published, and
/// ``stored(_:)`` once JetStream acknowledged the intent; ``held(_:)`` when the first attempt
/// failed and it is being retried. ``settle()`` (before a state save) waits for every intent
/// begun before it to be stored or held, and says how many are held: a save must then be
/// refused, or a crash would lose those posts.
public final class IntentLedger: Sendable {
    private struct State {
        var next: UInt64 = 0
        var open: Set<UInt64> = []
        var held: Set<UInt64> = []
        var waiters: [(mark: UInt64, continuation: CheckedContinuation<Int, Never>)] = []
    }

    private let state = SyncLock(State())

    /// An empty ledger.
    public init() {}

    /// Records an intent about to be published; its ticket.
    public func begin() -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.open.insert(state.next)
            return state.next
        }
    }

    /// The intent is stored in the queue (or given up for good, reported).
    public func stored(_ ticket: UInt64) {
        resume { state in
            state.open.remove(ticket)
            state.held.remove(ticket)
        }
    }

    /// The intent's first publish failed; it is being retried.
    public func held(_ ticket: UInt64) {
        resume { state in
            if state.open.remove(ticket) != nil { state.held.insert(ticket) }
        }
    }

    /// Intents being retried.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Waits until every intent begun before this call is stored or held; the number held.
    public func settle() async -> Int {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Int? in
                let mark = state.next
                if !state.open.contains(where: { $0 <= mark }) { return state.held.count }
                state.waiters.append((mark, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func resume(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [(CheckedContinuation<Int, Never>, Int)] in
            change(&state)
            var ready: [(CheckedContinuation<Int, Never>, Int)] = []
            state.waiters.removeAll { waiter in
                guard !state.open.contains(where: { $0 <= waiter.mark }) else { return false }
                ready.append((waiter.continuation, state.held.count))
                return true
            }
            return ready
        }
        for (continuation, held) in ready { continuation.resume(returning: held) }
    }
}
