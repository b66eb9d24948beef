import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldSync
import HeraldTestSupport

/// An event the tests publish.
struct Signal: Event, Hashable {
    var topic: Topic
    var n: Int
}

/// Everything a bus carries, in order, with a wait for a condition over it (a gate, not a sleep).
final class BusLog: Sendable {
    private struct State {
        var envelopes: [Envelope<any Event>] = []
        var waiters: [(done: @Sendable ([Envelope<any Event>]) -> Bool, continuation: CheckedContinuation<[Envelope<any Event>], Never>)] = []
    }
    private let state = SyncLock(State())
    private let subscription = SyncLock<Subscription?>(nil)

    init(_ bus: EventBus, matching pattern: TopicPattern = ">") throws {
        let made = try bus.subscribe(matching: pattern, name: "test.log") { [self] envelope in record(envelope) }
        subscription.withLock { $0 = made }
    }

    var envelopes: [Envelope<any Event>] { state.withLock { $0.envelopes } }

    /// The events of type `E`.
    func events<E: Event>(_ type: E.Type) -> [E] { envelopes.compactMap { $0.event as? E } }

    /// Returns once `done` holds for what arrived so far.
    @discardableResult
    func wait(until done: @escaping @Sendable ([Envelope<any Event>]) -> Bool) async -> [Envelope<any Event>] {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> [Envelope<any Event>]? in
                if done(state.envelopes) { return state.envelopes }
                state.waiters.append((done, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Returns once an event of type `E` matching `match` arrived; that event.
    @discardableResult
    func first<E: Event>(_ type: E.Type, where match: @escaping @Sendable (E) -> Bool = { _ in true }) async -> E? {
        let seen = await wait { $0.contains { ($0.event as? E).map(match) ?? false } }
        return seen.compactMap { $0.event as? E }.first(where: match)
    }

    private func record(_ envelope: Envelope<any Event>) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Envelope<any Event>], Never>, [Envelope<any Event>])] in
            state.envelopes.append(envelope)
            var ready: [(CheckedContinuation<[Envelope<any Event>], Never>, [Envelope<any Event>])] = []
            let all = state.envelopes
            state.waiters.removeAll { waiter in
                guard waiter.done(all) else { return false }
                ready.append((waiter.continuation, all))
                return true
            }
            return ready
        }
        for (continuation, all) in ready { continuation.resume(returning: all) }
    }
}

enum ClusterTestSettings {
    /// Settings for `node` on `servers` with short timings.
    static func make(_ servers: [String], node: String, replicas: Int = 1, leaseTTL: Duration = .seconds(2),
                     ackWait: Duration = .seconds(2), stream: String = "HERALD") -> ClusterSettings {
        ClusterSettings(servers: servers.compactMap(URL.init(string:)), node: node, stream: stream, replicas: replicas, leaseTTL: leaseTTL,
                        ackWait: ackWait)
    }
}
