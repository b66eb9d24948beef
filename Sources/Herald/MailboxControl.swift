/// The type-erased face of a mailbox, for stats and shutdown.
@usableFromInline
protocol MailboxControl: AnyObject, Sendable {
    var snapshot: MailboxSnapshot { get }
    /// The same, for a caller that holds the bus lock.
    var snapshotHoldingLock: MailboxSnapshot { get }
    /// Stop taking events from publishers after the waiting ones are delivered.
    func finish()
    /// End now: discard waiting events (returned count) and wake everyone.
    @discardableResult func close() -> Int
    /// Returns when the consumer has taken every event after `finish()`, or the mailbox closed.
    func waitUntilDrained() async
    /// Returns when there is room (or the mailbox closed, or the task is cancelled).
    func waitForSpace() async
}

@usableFromInline
struct MailboxSnapshot: Sendable {
    var depth: Int
    var highWaterMark: Int
    var dropped: Int
    /// Events discarded undelivered: waiting when the mailbox closed, or arriving after its
    /// consumer finished draining.
    var discarded: Int
}
