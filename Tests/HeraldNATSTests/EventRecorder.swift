import HeraldNATS
import HeraldSync

/// Records a connection's events as they come and lets a test await one that matches (a gate,
/// not a sleep).
final class EventRecorder: Sendable {
    private struct State {
        var events: [NATSEvent] = []
        var waiters: [(from: Int, match: @Sendable (NATSEvent) -> Bool, continuation: CheckedContinuation<NATSEvent?, Never>)] = []
        var ended = false
    }
    private let state = SyncLock(State())

    init(_ connection: NATSConnection) {
        let stream = connection.events
        Task { [self] in
            for await event in stream { record(event) }
            finish()
        }
    }

    var events: [NATSEvent] { state.withLock { $0.events } }
    var count: Int { state.withLock { $0.events.count } }

    /// The first event at or after index `from` that matches; nil if the stream ended first.
    @discardableResult
    func next(from: Int = 0, _ match: @escaping @Sendable (NATSEvent) -> Bool) async -> NATSEvent? {
        await withCheckedContinuation { continuation in
            let found = state.withLock { state -> NATSEvent?? in
                if let event = state.events.dropFirst(from).first(where: match) { return .some(event) }
                if state.ended { return .some(nil) }
                state.waiters.append((from, match, continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    private func record(_ event: NATSEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<NATSEvent?, Never>] in
            state.events.append(event)
            let index = state.events.count - 1
            var ready: [CheckedContinuation<NATSEvent?, Never>] = []
            state.waiters.removeAll { waiter in
                guard index >= waiter.from, waiter.match(event) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: event) }
    }

    private func finish() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }
}

extension NATSEvent {
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var isReconnected: Bool { if case .reconnected = self { true } else { false } }
    var isClosed: Bool { if case .closed = self { true } else { false } }
    var isConnectFailed: Bool { if case .connectFailed = self { true } else { false } }
    var droppedMessages: Int { if case .dropped(let messages, _) = self { messages } else { 0 } }
}
