#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A typed, in-process event bus: NotificationCenter's publish and subscribe, with typed events,
/// topic patterns, per-subscription mailboxes, ordering and backpressure.
///
/// ```swift
/// let bus = EventBus()
/// let token = try bus.subscribe(to: LoadFinished.self, from: "loader.home") { event in
///     print("home loaded \(event.count) items")
/// }
/// try bus.post(LoadFinished(loader: "home", count: 20), from: "loader.home")
/// ```
///
/// Guarantees:
/// - **Live on return.** When `subscribe` returns, the subscription receives every event
///   published afterwards.
/// - **Order.** Each subscription sees one publisher's events in the order published. A handler
///   may publish; that event reaches every subscriber after the one being delivered.
/// - **Isolation.** A handler that throws becomes a ``SubscriberFailed`` event; other subscribers
///   are unaffected. A queued subscriber's slowness delays only itself, and with
///   ``OverflowPolicy/wait`` the publishers that `await publish` into its full mailbox.
/// - **Thread safety.** Every method may be called from any thread or task.
///
/// The bus shuts down when ``shutdown(timeout:)`` is called or the bus object is deinitialised
/// (which discards queued events; call `shutdown` to drain them).
public final class EventBus: Sendable {
    /// Options fixed when a bus is made.
    public struct Configuration: Sendable {
        /// Publish a ``DeadLetter`` on `bus.deadletter` for events no subscription matched.
        public var deadLetters: Bool
        /// The clock for envelope timestamps and retention time-to-live (tests inject one).
        /// The bus never calls it while holding its lock, so it may use the bus.
        public var clock: @Sendable () -> Date
        /// The sequence number of the bus's first event; later events count up from it.
        ///
        /// A program that archives events and restarts passes one more than the last archived
        /// sequence number, so numbers do not repeat across runs. 0 is taken as 1.
        /// ``BusStatistics/published`` still counts this bus's events from zero.
        public var firstSequence: UInt64

        public init(deadLetters: Bool = false, firstSequence: UInt64 = 1,
                    clock: @escaping @Sendable () -> Date = { Date() }) {
            self.deadLetters = deadLetters
            self.firstSequence = firstSequence
            self.clock = clock
        }
    }

    @usableFromInline let core: BusCore

    /// Makes a bus.
    public init(configuration: Configuration = Configuration()) {
        core = BusCore(configuration: configuration)
    }

    deinit {
        core.terminate()
    }

    /// The bus's globally unique id, the first half of every ``EventID`` it assigns.
    public var id: UUID { core.id }

    // MARK: Publishing

    /// Publishes an event synchronously, like `NotificationCenter.post`.
    ///
    /// Inline subscribers have run when this returns; queued subscribers have the event in their
    /// mailboxes. Never blocks: a full ``OverflowPolicy/wait`` mailbox takes the event beyond its
    /// capacity (use ``publish(_:from:correlation:retain:)`` to wait for room instead).
    ///
    /// - Parameters:
    ///   - sender: who publishes, for subscriptions filtered `from:` a sender.
    ///   - correlation: the ``EventID`` of the event that caused this one; by default the event
    ///     starts its own chain.
    ///   - retain: keep the event for subscriptions made later (see ``Retention``).
    /// - Returns: the event's id.
    /// - Throws: ``EventBusError`` when the topic is invalid or the bus is shutting down.
    @inlinable @discardableResult
    public func post<E: Event>(_ event: E, from sender: Sender? = nil, correlation: EventID? = nil,
                               retain: Retention = .none) throws(EventBusError) -> EventID {
        let sequence = try core.post(event, sender: sender, correlation: correlation, retention: retain, isInternal: false)
        return core.eventID(sequence)
    }

    /// Publishes an event, waiting for room in full ``OverflowPolicy/wait`` mailboxes
    /// (backpressure). Otherwise the same as ``post(_:from:correlation:retain:)``.
    ///
    /// If the task is cancelled while waiting, the event is put in the full mailbox anyway, so
    /// nothing is lost, and `publish` returns.
    @inlinable @inline(__always) @discardableResult
    public func publish<E: Event>(_ event: E, from sender: Sender? = nil, correlation: EventID? = nil,
                                  retain: Retention = .none) async throws(EventBusError) -> EventID {
        let sequence = try await core.publish(event, sender: sender, correlation: correlation, retention: retain)
        return core.eventID(sequence)
    }

    // MARK: Retained events

    /// The retained event on `topic`, if one is kept and has not expired.
    public func retainedEvent(on topic: Topic) -> Envelope<any Event>? {
        let now = core.now()
        let (envelope, expired) = core.state.withLock { s -> (Envelope<any Event>?, RetainedEvent?) in
            guard let entry = s.retained[topic.index] else { return (nil, nil) }
            if let expires = entry.expires, expires <= now {
                return (nil, s.retained.removeValue(forKey: topic.index))
            }
            return (entry.envelope, nil)
        }
        _ = expired  // released here, after the lock
        return envelope
    }

    /// Forgets the retained event on `topic`.
    public func clearRetainedEvent(on topic: Topic) {
        _ = core.state.withLock { $0.retained.removeValue(forKey: topic.index) }
    }
}
