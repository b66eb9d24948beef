import HeraldSync

/// Pull consumers: one request for a batch, answered by the messages and a status.
extension JetStreamContext {
    /// Fetches up to `batch` messages from a pull consumer (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`).
    ///
    /// Returns when `batch` messages arrived, or the server ended the request: with `noWait`, at
    /// once when nothing is pending (404); otherwise when `expires` passed (408) with what arrived
    /// so far. Each message must be acked (or nakked) per the consumer's ack policy.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): no hop to another thread
    /// before the pull request goes out or after the batch came.
    /// - Throws: ``JetStreamError`` for a missing consumer (and other 409 statuses),
    ///   ``NATSError`` `.timeout` when the server does not answer at all.
    nonisolated(nonsending) public func fetch(stream: String, consumer: String, batch: Int, expires: Duration = .seconds(5), noWait: Bool = false) async throws -> [JetStreamMessage] {
        try Self.validateName(stream, what: "stream")
        try Self.validateName(consumer, what: "consumer")
        let subject = "\(apiPrefix).CONSUMER.MSG.NEXT.\(stream).\(consumer)"
        let count = max(1, batch)
        var body = "{\"batch\":\(count)"
        if noWait { body += ",\"no_wait\":true" } else { body += ",\"expires\":\(expires.wholeNanoseconds)" }
        body += "}"
        let collector = FetchCollector(batch: count, connection: connection, subject: subject)
        let core = connection.core
        let box = TokenBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[JetStreamMessage], any Error>) in
                collector.start(continuation)
                do {
                    let route = try core.openRoute(
                        subject: subject, timeout: (noWait ? .zero : expires) + timeout,
                        onMessage: { collector.take($0) }, onEnd: { collector.end($0) })
                    box.set(route.token)
                    try connection.publish(subject, reply: route.replySubject, payload: Array(body.utf8))
                } catch {
                    if let token = box.take() { core.cancelRoute(token, reason: nil) }
                    collector.end(error)
                }
            }
        } onCancel: {
            if let token = box.take() { core.cancelRoute(token, reason: .cancelled) }
        }
    }
}

/// Gathers one pull request's messages; ends once, on the last message, a status or a timeout.
final class FetchCollector: Sendable {
    private struct State {
        var messages: [JetStreamMessage] = []
        var continuation: CheckedContinuation<[JetStreamMessage], any Error>?
        var done = false
    }
    private let state = SyncLock(State())
    private let batch: Int
    private let connection: NATSConnection
    private let subject: String

    init(batch: Int, connection: NATSConnection, subject: String) {
        self.batch = batch
        self.connection = connection
        self.subject = subject
    }

    func start(_ continuation: CheckedContinuation<[JetStreamMessage], any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Takes one message of the route; true when the fetch is complete.
    func take(_ message: NATSMessage) -> Bool {
        if let status = message.status, message.payload.isEmpty || status >= 300 {
            switch status {
            case 100: return false  // a heartbeat
            case 404, 408: finish(.success(nil))
            case 503: finish(.failure(NATSError.noResponders(subject)))
            default:
                let text = message.headers?.statusDescription ?? "status \(status)"
                finish(.failure(JetStreamError(code: status, errorCode: 0, description: text, subject: subject)))
            }
            return true
        }
        let delivered: JetStreamMessage
        do throws(NATSError) {
            delivered = try JetStreamMessage(message: message, connection: connection)
        } catch {
            finish(.failure(error))
            return true
        }
        let complete = state.withLock { state -> Bool in
            guard !state.done else { return true }
            state.messages.append(delivered)
            return state.messages.count >= batch
        }
        if complete { finish(.success(nil)) }
        return complete
    }

    /// The route ended: a timeout with messages is a short batch, without them an error.
    func end(_ error: any Error) {
        let hasMessages = state.withLock { !$0.messages.isEmpty }
        if let error = error as? NATSError, error.kind == .timeout, hasMessages {
            finish(.success(nil))
        } else {
            finish(.failure(error))
        }
    }

    private func finish(_ outcome: Result<Void?, any Error>) {
        let (continuation, messages) = state.withLock { state -> (CheckedContinuation<[JetStreamMessage], any Error>?, [JetStreamMessage]) in
            guard !state.done else { return (nil, []) }
            state.done = true
            defer { state.continuation = nil }
            return (state.continuation, state.messages)
        }
        switch outcome {
        case .success: continuation?.resume(returning: messages)
        case .failure(let error):
            // A failure after some messages arrived still hands them over: they must be acked.
            if messages.isEmpty { continuation?.resume(throwing: error) } else { continuation?.resume(returning: messages) }
        }
    }
}
