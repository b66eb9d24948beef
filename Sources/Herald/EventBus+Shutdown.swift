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

    /// Whether every accepted event was delivered before the deadline.
    public var drained: Bool
    /// Per subscription, the events discarded undelivered: waiting at the deadline, or arriving
    /// after the subscription finished draining (empty when `drained`). Events a subscriber's
    /// task had already taken when the deadline came are abandoned after the handler call in
    /// progress; they are counted in that subscription's `discarded` statistic, not here.
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
        let state = core.state.withLock { s -> ([SubscriberRecord], UInt64)? in
            guard s.phase == .running else { return nil }
            s.phase = .draining
            return (s.records.values.sorted { $0.id < $1.id }, s.accepted)
        }
        guard let (records, accepted) = state else {
            return ShutdownReport(drained: true, discarded: [], droppedByOverflow: 0)
        }
        let core = self.core
        // Set before anything waits, so that the count is fixed from the moment the doors close.
        core.drainTarget.store(accepted, ordering: .sequentiallyConsistent)
        let queued = records.compactMap { record in record.mailbox.map { (record, $0) } }

        // Detached, so a shutdown called from a cancelled task (a daemon stopping on SIGTERM)
        // still drains until the deadline.
        let drained = await Task.detached { await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask {
                // Publishes accepted before the doors closed may still be delivering.
                await core.waitForAcceptedPublishes(accepted)
                if Task.isCancelled { return false }
                for (_, mailbox) in queued { mailbox.finish() }
                for (_, mailbox) in queued { await mailbox.waitUntilDrained() }
                return true
            }
            group.addTask {
                try? await clock.sleep(until: deadline, tolerance: nil)
                return false
            }
            let drained = await group.next() ?? true
            if !drained {
                // The deadline came first: stop the subscribers after the event in hand, and
                // discard what waits (which also ends the drain wait).
                for (record, mailbox) in queued {
                    record.active.store(false, ordering: .relaxed)
                    mailbox.close()
                }
            }
            group.cancelAll()
            return drained
        } }.value

        var discarded: [ShutdownReport.Discarded] = []
        var dropped = 0
        for (record, mailbox) in queued {
            mailbox.close()
            let snapshot = mailbox.snapshot
            dropped += snapshot.dropped
            if snapshot.discarded > 0 {
                discarded.append(.init(subscriptionID: record.id, subscription: record.name, count: snapshot.discarded))
            }
        }
        core.state.withLock { $0.phase = .stopped }
        return ShutdownReport(drained: drained && discarded.isEmpty, discarded: discarded, droppedByOverflow: dropped)
    }
}
