/// A subscription read with `for await`: `for await event in bus.events(of: T.self) { … }`.
///
/// The stream owns its ``subscription``: it ends when the stream and its iterator are gone, when
/// the subscription is cancelled, when the iterating task is cancelled, or when the bus shuts
/// down (after the events already queued). It reads the same bounded mailbox as a queued handler,
/// with the same overflow policies; with `.wait` an `await publish` waits while the stream is
/// full, so iterate it, or cancel it.
public struct EventStream<Element: Sendable>: AsyncSequence, Sendable {
    let mailbox: Mailbox<Element>
    /// The subscription behind the stream.
    public let subscription: Subscription

    init(mailbox: Mailbox<Element>, subscription: Subscription) {
        self.mailbox = mailbox
        self.subscription = subscription
        mailbox.markAsStream()
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(mailbox: mailbox, subscription: subscription)
    }

    /// Iterates the stream's mailbox, a batch at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox<Element>
        let subscription: Subscription
        private var batch = ContiguousArray<MailboxItem<Element>>()
        private var index = 0
        private var finished = false

        init(mailbox: Mailbox<Element>, subscription: Subscription) {
            self.mailbox = mailbox
            self.subscription = subscription
        }

        public mutating func next() async -> Element? {
            while !finished {
                if index < batch.count, subscription.isActive {
                    let item = batch[index]
                    index += 1
                    if index == batch.count { mailbox.streamHolds(false) }
                    subscription.record.delivered.wrappingAdd(1, ordering: .relaxed)
                    item.slot.takeUnretainedValue().delivered.wrappingAdd(1, ordering: .relaxed)
                    return item.payload
                }
                if Task.isCancelled { break }
                var refill = ContiguousArray<MailboxItem<Element>>()
                swap(&refill, &batch)
                let mailbox = self.mailbox
                let subscription = self.subscription
                let taken = await withTaskCancellationHandler {
                    await mailbox.nextBatch(&refill)
                } onCancel: {
                    subscription.cancel()
                }
                swap(&refill, &batch)
                guard let taken else { break }
                index = taken.start
                subscription.core.reportDrops(subscription.record, count: taken.dropsToReport, total: taken.droppedTotal)
            }
            if !finished {
                finished = true
                subscription.cancel()
            }
            return nil
        }
    }
}
