import Herald
import HeraldSync

/// A recording subscriber: every envelope a bus routes to its pattern, in order, with waits for
/// a condition on them, for tests of code that publishes (as swift-log ships an in-memory
/// handler for tests of code that logs).
///
/// ```swift
/// let recorder = try EventRecorder(bus: bus, matching: "loader.>")
/// try await loader.load()
/// let finished = await recorder.first(TimelineLoaded.self)
/// #expect(recorder.topics == ["loader.home.finished"])
/// ```
///
/// It subscribes inline (it sees each envelope as the bus routes it) and stays subscribed
/// until it is deinitialised or ``cancel()`` is called. Made with ``init()``, it records only
/// what is handed to ``record(_:)``. A wait gives up after its `timeout` (five minutes unless
/// given) and answers false or nil, so a test whose event never comes fails instead of hanging.
public final class EventRecorder: Sendable {
    private let recording = Recording<Envelope<any Event>>()
    private let subscription = SyncLock<Subscription?>(nil)

    /// A recorder of the envelopes handed to ``record(_:)``.
    public init() {}

    /// A recorder subscribed to `pattern` on `bus` (every topic unless given), as `name`.
    ///
    /// - Throws: the bus's error when it no longer takes subscriptions.
    public init(bus: EventBus, matching pattern: TopicPattern = ">", name: String = "test.recorder") throws {
        let token = try bus.subscribe(matching: pattern, name: name) { [weak self] envelope in self?.record(envelope) }
        subscription.withLock { $0 = token }
    }

    /// Records an envelope (the bus calls this for a subscribed recorder).
    public func record(_ envelope: Envelope<any Event>) { recording.append(envelope) }

    /// Ends the subscription; what was recorded stays.
    public func cancel() {
        let token = subscription.withLock { token in
            defer { token = nil }
            return token
        }
        token?.cancel()
    }

    /// Every envelope recorded so far, in order.
    public var envelopes: [Envelope<any Event>] { recording.values }

    /// Their topics, in order.
    public var topics: [String] { envelopes.map(\.topic.name) }

    /// The recorded events of type `E`, in order.
    public func events<E: Event>(_ type: E.Type) -> [E] { envelopes.compactMap { $0.event as? E } }

    /// Suspends until `condition` holds on the envelopes; false when `timeout` passed first.
    @discardableResult
    public func wait(timeout: Duration = .seconds(300), until condition: @escaping @Sendable ([Envelope<any Event>]) -> Bool) async -> Bool {
        await recording.wait(timeout: timeout, until: condition)
    }

    /// Suspends until an event of type `E` that matches was recorded; that event (nil when
    /// `timeout` passed first).
    @discardableResult
    public func first<E: Event>(_ type: E.Type, timeout: Duration = .seconds(300), where match: @escaping @Sendable (E) -> Bool = { _ in true }) async -> E? {
        await recording.wait(timeout: timeout) { $0.contains { ($0.event as? E).map(match) ?? false } }
        return events(E.self).first(where: match)
    }
}
