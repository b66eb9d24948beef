/// What ``EventBus/shutdown(timeout:)`` did.
public struct ShutdownReport: Sendable, Hashable {
    /// Events left in one subscription's mailbox at the deadline, discarded undelivered.
    public struct Discarded: Sendable, Hashable {
        public var subscriptionID: UInt64
        public var subscription: String
        public var count: Int

        public init(subscriptionID: UInt64, subscription: String, count: Int) {
            self.subscriptionID = subscriptionID
            self.subscription = subscription
            self.count = count
        }
    }

    /// Whether every mailbox drained before the deadline.
    public var drained: Bool
    /// Per subscription, the events discarded at the deadline (empty when `drained`).
    public var discarded: [Discarded]
    /// Events dropped by overflow policies over the bus's life, for the record.
    public var droppedByOverflow: Int

    /// All events discarded at the deadline.
    public var totalDiscarded: Int { discarded.reduce(0) { $0 + $1.count } }
}

extension EventBus {
    /// Shuts the bus down, giving queued subscribers `timeout` to finish.
    ///
    /// At once, new publishes and subscriptions are refused (``EventBusError/Code/shutDown``).
    /// Then every mailbox is drained: queued handlers and streams receive what is waiting.
    /// Events still waiting at the deadline are discarded and reported. Failure and drop
    /// reports that handlers cause while draining are still delivered. Calling it again returns
    /// at once with an empty report.
    public func shutdown(timeout: Duration = .seconds(5)) async -> ShutdownReport {
        let clock = ContinuousClock()
        return await shutdown(deadline: clock.now.advanced(by: timeout), clock: clock)
    }

    /// Shuts the bus down, giving queued subscribers until `deadline` to finish.
    public func shutdown(deadline: ContinuousClock.Instant) async -> ShutdownReport {
        await shutdown(deadline: deadline, clock: ContinuousClock())
    }

    /// Shuts the bus down with a deadline on `clock` (tests pass a manual clock).
    public func shutdown<C: Clock>(deadline: C.Instant, clock: C) async -> ShutdownReport {
        let records = core.state.withLock { s -> [SubscriberRecord]? in
            guard s.phase == .running else { return nil }
            s.phase = .draining
            return s.records.values.sorted { $0.id < $1.id }
        }
        guard let records else { return ShutdownReport(drained: true, discarded: [], droppedByOverflow: 0) }
        let queued = records.compactMap { record in record.mailbox.map { (record, $0) } }
        for (_, mailbox) in queued { mailbox.finish() }

        let discarded = await withTaskGroup(of: Bool.self) { group -> [ShutdownReport.Discarded] in
            group.addTask {
                for (_, mailbox) in queued { await mailbox.waitUntilDrained() }
                return true
            }
            group.addTask {
                try? await clock.sleep(until: deadline, tolerance: nil)
                return false
            }
            let drained = await group.next() ?? true
            var discarded: [ShutdownReport.Discarded] = []
            if !drained {
                // The deadline came first: closing discards what waits, and ends the drain wait.
                for (record, mailbox) in queued {
                    let count = mailbox.close()
                    if count > 0 {
                        discarded.append(.init(subscriptionID: record.id, subscription: record.name, count: count))
                    }
                }
            }
            group.cancelAll()
            return discarded
        }

        var dropped = 0
        for (_, mailbox) in queued {
            mailbox.close()
            dropped += mailbox.snapshot.dropped
        }
        core.state.withLock { $0.phase = .stopped }
        return ShutdownReport(drained: discarded.isEmpty, discarded: discarded, droppedByOverflow: dropped)
    }
}
