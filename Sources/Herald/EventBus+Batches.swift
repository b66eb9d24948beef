extension EventBus {
    /// Subscribes to every event matching `pattern` through a bounded mailbox whose task hands
    /// the handler everything waiting at once, as an ``EventBatch`` in publication order.
    ///
    /// For handlers whose cost is per call rather than per event (a file sink writing many lines
    /// in one `write(2)`, a group commit). The handler may suspend (a file sink awaits its own
    /// I/O thread), and the next batch waits for it. Batches are as large as what waited in the mailbox:
    /// one event when the handler keeps up, up to the capacity (or beyond it, when synchronous
    /// posts exceed it) when it does not. No event of a batch counts as delivered before the
    /// handler returns. The handler runs on the subscription's own task, one batch at a time.
    ///
    /// - Parameters:
    ///   - capacity: events that may wait in the mailbox; at least 1.
    ///   - overflow: what happens when the mailbox is full.
    ///   - handler: called once per batch. Throwing ``EventBatchFailures`` fails only the events
    ///     it names; any other error fails the whole batch. Each failed event becomes a
    ///     ``SubscriberFailed`` event.
    /// - Returns: the subscription; it ends when this object is released or cancelled (a batch
    ///   being delivered is still delivered whole).
    /// - Throws: ``EventBusError`` for an invalid pattern or capacity, or a shut-down bus.
    public func subscribeInBatches(
        matching pattern: TopicPattern, from sender: Sender? = nil, name: String? = nil,
        capacity: Int = 1024, overflow: OverflowPolicy = .wait,
        _ handler: @escaping @Sendable (EventBatch<Envelope<any Event>>) async throws -> Void
    ) throws(EventBusError) -> Subscription {
        let request = patternRequest(pattern, sender, name, .queued(capacity: capacity, overflow: overflow))
        let (subscription, mailbox) = try core.subscribe(request, consumer: .stream) { $0 }
        if let mailbox {
            let record = subscription.record
            Task.detached { [core] in await core.consumeBatches(mailbox, record: record, handler: handler) }
        }
        return subscription
    }
}

extension BusCore {
    /// A batch subscription's task: takes what is waiting and hands it to the handler at once.
    func consumeBatches<Payload: Sendable>(
        _ mailbox: Mailbox<Payload>, record: SubscriberRecord,
        handler: (EventBatch<Payload>) async throws -> Void
    ) async {
        var items = ContiguousArray<MailboxItem<Payload>>()
        while let taken = await mailbox.nextBatch(&items) {
            reportDrops(record, count: taken.dropsToReport, total: taken.droppedTotal)
            let count = items.count - taken.start
            guard record.isActive else {
                mailbox.abandon(count)
                continue
            }
            var failures: [Int: any Error] = [:]
            var failedAll: (any Error)?
            do {
                try await handler(EventBatch(items: items, offset: taken.start))
            } catch let partial as EventBatchFailures {
                for (index, error) in partial.failures { failures[index] = error }
            } catch {
                failedAll = error
            }
            var delivered = 0
            var run = DeliveryRun()
            for index in taken.start..<items.count {
                let item = items[index]
                if let error = failedAll ?? failures[index - taken.start] {
                    reportFailure(record, slot: item.slot, sequence: item.sequence, error: error)
                } else {
                    delivered += 1
                    run.count(item.slot)
                }
            }
            run.flush()
            record.delivered.wrappingAdd(delivered, ordering: .relaxed)
            // As in `consume`: a small batch means we keep up, so let publishers fill the next.
            if count < Mailbox<Payload>.smallBatch {
                for _ in 0..<Mailbox<Payload>.yieldsAfterSmallBatch { await Task.yield() }
            }
        }
    }
}
