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

    /// Iterates the stream's mailbox, one event at a time, so an iterator that stops early
    /// leaves the rest waiting for the next one. Several iterators may share a stream; each event
    /// goes to one of them.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox<Element>
        let subscription: Subscription
        private var finished = false

        init(mailbox: Mailbox<Element>, subscription: Subscription) {
            self.mailbox = mailbox
            self.subscription = subscription
        }

        public mutating func next() async -> Element? {
            guard !finished else { return nil }
            if !Task.isCancelled, subscription.isActive {
                let mailbox = self.mailbox
                let subscription = self.subscription
                let taken = await withTaskCancellationHandler {
                    await mailbox.next()
                } onCancel: {
                    subscription.cancel()
                }
                if let (item, drops, total) = taken, subscription.isActive {
                    subscription.core.reportDrops(subscription.record, count: drops, total: total)
                    subscription.record.delivered.wrappingAdd(1, ordering: .relaxed)
                    item.slot._withUnsafeGuaranteedRef { _ = $0.delivered.wrappingAdd(1, ordering: .relaxed) }
                    return item.payload
                }
            }
            finished = true
            subscription.cancel()
            return nil
        }
    }
}
