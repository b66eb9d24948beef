/// The events a batch subscription's handler receives at once: everything that was waiting in
/// its mailbox, in publication order, indexed from 0.
///
/// ``EventBatchFailures`` names failed events by these indices. Cheap to pass around (it shares
/// the mailbox's storage); keeping it after the handler returns only costs a copy later.
public struct EventBatch<Element: Sendable>: RandomAccessCollection, Sendable {
    @usableFromInline let items: ContiguousArray<MailboxItem<Element>>
    /// Where the batch starts in `items` (the mailbox may keep dropped entries before it).
    @usableFromInline let offset: Int

    @inlinable
    init(items: ContiguousArray<MailboxItem<Element>>, offset: Int) {
        self.items = items
        self.offset = offset
    }

    @inlinable public var startIndex: Int { 0 }

    @inlinable public var endIndex: Int { items.count - offset }

    @inlinable public subscript(position: Int) -> Element { items[offset + position].payload }
}

/// Thrown by a batch handler when only some of its events failed: those at ``failures``' indices
/// are each reported as a ``SubscriberFailed`` event and counted as failed; every other event of
/// the batch counts as delivered.
///
/// Any other error thrown by a batch handler fails every event of the batch.
public struct EventBatchFailures: Error, Sendable {
    /// The failed events' indices in the ``EventBatch``, each with its error.
    public var failures: [(index: Int, error: any Error)]

    /// - Parameter failures: the failed events' indices in the batch (in any order; an index
    ///   outside the batch is ignored), each with its error.
    public init(_ failures: [(index: Int, error: any Error)]) {
        self.failures = failures
    }
}
