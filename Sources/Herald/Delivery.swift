/// What a bounded mailbox does when an event arrives and it is full.
public enum OverflowPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Backpressure: an `await publish` waits for room. A synchronous `post` never blocks
    /// its thread: it adds the event beyond the capacity (nothing is lost, and the high-water
    /// mark in ``EventBus/stats()`` shows it).
    case wait
    /// Drop the oldest waiting event to make room.
    case dropOldest
    /// Drop the arriving event.
    case dropNewest
}

/// How a subscription receives events.
public struct Delivery: Sendable, Hashable, CustomStringConvertible {
    enum Mode: Sendable, Hashable {
        case inline
        case queued(capacity: Int, overflow: OverflowPolicy)
    }
    let mode: Mode

    /// On the publisher's thread, before `post` / `publish` returns (NotificationCenter's
    /// `queue: nil`). The handler must be quick; it may publish.
    public static let inline = Delivery(mode: .inline)

    /// Through the subscription's own bounded mailbox, drained in order by its own task, so a
    /// slow handler delays only itself (and, with `.wait`, publishers when its mailbox is full).
    ///
    /// - Parameters:
    ///   - capacity: events that may wait in the mailbox (not counting the batch the task is
    ///     delivering); at least 1.
    ///   - overflow: what happens when the mailbox is full.
    public static func queued(capacity: Int = 1024, overflow: OverflowPolicy = .wait) -> Delivery {
        Delivery(mode: .queued(capacity: capacity, overflow: overflow))
    }

    public var description: String {
        switch mode {
        case .inline: "inline"
        case .queued(let capacity, let overflow): "queued(capacity: \(capacity), overflow: \(overflow))"
        }
    }
}

/// How long a published event is kept for subscriptions made later.
public struct Retention: Sendable, Hashable {
    @usableFromInline let timeToLive: Duration?
    @usableFromInline let enabled: Bool

    @inlinable init(timeToLive: Duration?, enabled: Bool) {
        self.timeToLive = timeToLive
        self.enabled = enabled
    }

    // Computed rather than stored statics: `none` is every publish's default argument, and a
    // stored one costs a lazy-initialisation check each time.
    /// Not kept (the default).
    @inlinable public static var none: Retention { Retention(timeToLive: nil, enabled: false) }
    /// Kept until another retained event on the topic replaces it, or it is cleared.
    @inlinable public static var untilReplaced: Retention { Retention(timeToLive: nil, enabled: true) }
    /// Kept for `duration` by the bus's clock, then forgotten.
    public static func `for`(_ duration: Duration) -> Retention {
        Retention(timeToLive: duration, enabled: true)
    }
}
