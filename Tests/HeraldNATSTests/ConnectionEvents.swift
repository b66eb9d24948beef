import HeraldNATS
import HeraldTesting

/// A connection's events as they come (a ``Recording`` of them, nil marking the stream's end),
/// and a wait for one that matches (a gate, not a sleep).
final class ConnectionEvents: Sendable {
    private let recording = Recording<NATSEvent?>()

    init(_ connection: NATSConnection) {
        let stream = connection.events
        Task { [recording] in
            for await event in stream { recording.append(event) }
            recording.append(nil)
        }
    }

    /// The events so far.
    var events: [NATSEvent] { recording.values.compactMap { $0 } }

    /// The first event at or after index `from` that matches; nil if the stream ended first.
    @discardableResult
    func next(from: Int = 0, _ match: @escaping @Sendable (NATSEvent) -> Bool) async -> NATSEvent? {
        let found: @Sendable ([NATSEvent?]) -> NATSEvent?? = { values in values.dropFirst(from).first { $0.map(match) ?? true } }
        await recording.wait { found($0) != nil }
        return found(recording.values) ?? nil
    }
}

extension NATSEvent {
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var isReconnected: Bool { if case .reconnected = self { true } else { false } }
    var isClosed: Bool { if case .closed = self { true } else { false } }
    var isConnectFailed: Bool { if case .connectFailed = self { true } else { false } }
    var droppedMessages: Int { if case .dropped(let messages, _) = self { messages } else { 0 } }
}
