import Foundation
import Herald
import HeraldServices

/// What a rule makes of one event, before anything is written or sent: the intents (rendered,
/// with their idempotency keys) and the failures to report. Shared by the ``PostScheduler``
/// (whose intents go to its outbox) and the cluster's shared post queue.
package enum PostIntake {
    /// One result of an event for a rule.
    package enum Outcome: Sendable {
        /// A post to make.
        case intent(PostIntent)
        /// A post that cannot be made (no array of new items, a template field missing).
        case failed(PostFailed)
    }

    /// The outcomes of `envelope` for `rule`, in item order. `claim(key)` is asked before a
    /// key's post is rendered (false skips it: already known); `unclaim(key)` undoes a claim
    /// whose rendering failed.
    ///
    /// - Throws: when the event cannot be encoded as JSON.
    package static func outcomes(for envelope: Envelope<any Event>, rule: PostRule, now: Date,
                                 claim: (String) -> Bool = { _ in true }, unclaim: (String) -> Void = { _ in }) throws -> [Outcome] {
        let event = try PostScheduler.json(of: envelope.event)
        let topic = envelope.topic.name
        let correlation = envelope.correlationID.description
        var contexts: [(key: String, context: PostContext)] = []
        switch rule.scope {
        case .event:
            contexts = [("\(rule.name):event:\(envelope.id)", PostContext(event: event, topic: topic))]
        case .newItems:
            guard let items = PostScheduler.newItems(of: event) else {
                return [.failed(PostFailed(rule: rule.name, key: nil, service: rule.service,
                                           reason: "the event on \(topic) has no array of new items (a field named new…)",
                                           correlation: correlation, attempts: 0))]
            }
            // The item's id, qualified by who announced it: two loaders' ids may overlap.
            let source = envelope.sender?.id ?? topic
            contexts = items.map { ("\(rule.name):item:\(source):\(PostScheduler.itemID($0))", PostContext(event: event, item: $0, topic: topic)) }
        }
        var outcomes: [Outcome] = []
        for (key, context) in contexts where rule.conditions.allSatisfy({ $0.holds(in: context) }) {
            // Claimed before anything else: two publishers announcing the same item at once
            // make one intent, not two.
            guard claim(key) else { continue }
            do {
                let content = try PostScheduler.render(rule.target, context)
                outcomes.append(.intent(PostIntent(key: key, rule: rule.name, service: rule.service, content: content,
                                                   correlation: correlation, created: now)))
            } catch {
                unclaim(key)
                outcomes.append(.failed(PostFailed(rule: rule.name, key: key, service: rule.service, reason: error.description,
                                                   correlation: correlation, attempts: 0)))
            }
        }
        return outcomes
    }
}
