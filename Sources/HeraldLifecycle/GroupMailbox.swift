import HeraldSync

/// What the service tasks, the signal watcher and the timer tell the group's loop, in order.
///
/// One reader. ``next()`` does not end on cancellation: the group must hear every service end
/// even while its own task is cancelled (cancellation is one of the things it is told).
final class GroupMailbox<Message: Sendable>: Sendable {
    private struct State {
        var messages: [Message] = []
        var reader: CheckedContinuation<Message, Never>?
    }

    private let state = SyncLock(State())

    func post(_ message: Message) {
        let reader = state.withLock { state -> CheckedContinuation<Message, Never>? in
            guard let reader = state.reader else {
                state.messages.append(message)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: message)
    }

    func next() async -> Message {
        await withCheckedContinuation { (continuation: CheckedContinuation<Message, Never>) in
            let message = state.withLock { state -> Message? in
                if !state.messages.isEmpty { return state.messages.removeFirst() }
                state.reader = continuation
                return nil
            }
            if let message { continuation.resume(returning: message) }
        }
    }
}
