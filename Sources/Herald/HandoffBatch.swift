/// Events handed from the publishers to a mailbox's consumer without the lock.
///
/// `@unchecked Sendable`: one side owns it at a time. A publisher fills it holding the bus lock
/// and publishes it with a releasing store to `Mailbox.handoff`; the consumer (or `close`) takes
/// it with an exchange, and gives it back emptied through `Mailbox.spare` the same way.
@usableFromInline
final class HandoffBatch<Item>: @unchecked Sendable {
    @usableFromInline var items = ContiguousArray<Item>()
    /// The first event of `items` to deliver.
    @usableFromInline var start = 0
    /// The running total of drops when it was handed over (its drops were reported then).
    @usableFromInline var droppedTotal = 0

    @usableFromInline init() {}
}
