import Herald

extension PostScheduler {
    /// Runs `envelope` through every rule whose pattern matches its topic, as if it had been
    /// published on the bus the scheduler started on (`herald replay --post`: archived envelopes,
    /// with their own ids and senders, so their keys are the ones their first run made). A key
    /// the outbox knows is skipped, so nothing is posted twice.
    ///
    /// - Throws: when the scheduler has not started, or the event cannot be encoded.
    package func submit(_ envelope: Envelope<any Event>) throws {
        guard let bus = state.withLock({ $0.bus }) else { throw PostSubmitError() }
        for rule in rules where rule.pattern.matches(envelope.topic) {
            try accept(envelope, rule: rule, bus: bus)
        }
    }
}

/// ``PostScheduler/submit(_:)`` before the scheduler started.
package struct PostSubmitError: Error, CustomStringConvertible {
    package var description: String { "the post scheduler has not started" }
}
