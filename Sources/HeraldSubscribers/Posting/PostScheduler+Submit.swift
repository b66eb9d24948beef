import Herald

extension PostScheduler {
    /// Runs `envelope` through every rule whose pattern matches its topic, as if it had been
    /// published on the bus the scheduler runs on (`herald replay --post`: archived envelopes,
    /// with their own ids and senders, so their keys are the ones their first run made). A key
    /// the outbox knows is skipped, so nothing is posted twice.
    ///
    /// - Throws: when the scheduler is not running, or the event cannot be encoded.
    package func submit(_ envelope: Envelope<any Event>) throws {
        guard let bus = state.withLock({ $0.machine.bus }) else { throw PostSubmitError() }
        for rule in rules where rule.pattern.matches(envelope.topic) {
            try accept(envelope, rule: rule, bus: bus)
        }
    }
}

/// ``PostScheduler/submit(_:)`` while the scheduler is not running.
package struct PostSubmitError: Error, CustomStringConvertible {
    package var description: String { "the post scheduler is not running" }
}
