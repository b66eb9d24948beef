import Foundation

extension PostScheduler {
    /// What a scheduler holds and has done since it started, for a status page or metrics.
    public struct Snapshot: Sendable, Hashable {
        /// One post waiting in the outbox (or being sent).
        public struct Waiting: Sendable, Hashable {
            /// Its idempotency key.
            public var key: String
            /// Its rule.
            public var rule: String
            /// The service it goes to.
            public var service: String
            /// When its intent was made.
            public var created: Date
        }

        /// Posts waiting to be sent or being sent, oldest first.
        public var waiting: [Waiting]
        /// Intents the outbox refused, held in memory until it takes them.
        public var held: Int
        /// Posts sent (duplicates that count as sent included), by rule, since start.
        public var sent: [String: Int]
        /// Posts given up, by rule, since start.
        public var failed: [String: Int]
    }

    /// What it holds and has done: copied under its lock, which is never held across I/O.
    public var snapshot: Snapshot {
        state.withLock { state in
            Snapshot(waiting: state.waiting.values.sorted { ($0.created, $0.key) < ($1.created, $1.key) },
                     held: state.held, sent: state.sent, failed: state.failed)
        }
    }
}
