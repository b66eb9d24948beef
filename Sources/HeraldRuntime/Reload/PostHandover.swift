import Herald
import HeraldSubscribers
import HeraldSync

/// Keeps a changed post subscriber from missing events while a reload replaces it: from before
/// the old scheduler stops until after the new one has subscribed, every event on one of the
/// new rules' topics is also kept here, and then handed to the new scheduler.
///
/// Nothing is posted twice for it: the old scheduler's intents are in the outbox, which the new
/// one reads when it starts, and an event it saw live is claimed already, so a key either knows
/// is skipped (``PostScheduler/submit(_:)``).
///
/// `Sendable`: its list is behind a lock.
final class PostHandover: Sendable {
    /// The events kept, shared with the subscription's handler.
    private final class Kept: Sendable {
        let envelopes = SyncLock<[Envelope<any Event>]>([])
    }

    private let kept = Kept()
    private let subscription: SyncLock<Subscription?>

    /// Starts keeping events matching `patterns` (inline, on the publisher: no event is missed).
    init(bus: EventBus, patterns: [TopicPattern]) {
        let kept = kept
        subscription = SyncLock(try? bus.subscribe(matching: .all, name: "reload.handover") { envelope in
            guard patterns.contains(where: { $0.matches(envelope.topic) }) else { return }
            kept.envelopes.withLock { $0.append(envelope) }
        })
    }

    /// Stops keeping events and hands what was kept to each of `schedulers` (by name), in order.
    ///
    /// - Returns: the problems (an event that could not be encoded), one line each.
    func finish(into schedulers: [String: PostScheduler]) -> [String] {
        subscription.withLock { $0?.cancel(); $0 = nil }
        let envelopes = kept.envelopes.withLock { kept in
            defer { kept = [] }
            return kept
        }
        var problems: [String] = []
        for (name, scheduler) in schedulers.sorted(by: { $0.key < $1.key }) {
            for envelope in envelopes {
                do {
                    try scheduler.submit(envelope)
                } catch {
                    problems.append("subscribers.\(name): an event on \(envelope.topic.name) during the reload: \(error)")
                }
            }
        }
        return problems
    }
}
