/// What an offer leaves for after the locks: consumers to wake and dropped events to release.
/// Both are rare (a consumer sleeps only on an empty mailbox; `dropOldest` trims once per
/// `capacity` drops), so the usual offer leaves nothing and allocates nothing.
@usableFromInline
struct MailboxWork {
    @usableFromInline var consumers: [UnsafeContinuation<Void, Never>]?
    /// Events taken out of mailboxes, of whatever payload type, released by `run`.
    @usableFromInline var released: [Any]?
    /// Drops of the last offer's mailbox to report, and its running total (a publisher handed
    /// over a batch); taken by the caller, which knows the subscription.
    @usableFromInline var drops: (count: Int, total: Int)?

    @inlinable init() {}

    @inlinable mutating func wake(_ more: [UnsafeContinuation<Void, Never>]) {
        if consumers == nil { consumers = more } else { consumers! += more }
    }

    @inlinable mutating func reportDrops(_ count: Int, total: Int) {
        drops = (count, total)
    }

    @inlinable mutating func release(_ items: some Any) {
        if released == nil { released = [items] } else { released!.append(items) }
    }

    @inlinable var isPending: Bool { consumers != nil || released != nil }

    /// Wakes the consumers and releases the events; outside every lock.
    @inlinable mutating func run() {
        if let consumers {
            self.consumers = nil
            for consumer in consumers { consumer.resume() }
        }
        released = nil
    }
}
