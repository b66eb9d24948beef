import HeraldSync

/// What the I/O thread does with each operation the server sent.
extension ConnectionCore {
    func dispatch(_ operation: NATSServerOperation, session: inout Session, liveness: inout ConnectionMachine.Liveness) {
        switch operation {
        case .message(let message):
            deliver(message)
        case .ping:
            state.withLock { $0.outbound.append(contentsOf: NATSClientFrames.pong) }
        case .pong:
            liveness.pong()
            state.withLock { $0.machine.pongReceived() }?.resume()
        case .ok:
            break
        case .error(let text):
            emit(.serverError(text))
        case .info(let json):
            guard let info = try? NATSServerInfo.decode(json) else {
                emit(.serverError("an INFO update could not be read"))
                return
            }
            session.info = info
            session.parser.maxPayload = payloadLimit(info)
            let (added, server) = state.withLock { state in
                state.info = info
                state.maxPayload = payloadLimit(info)
                return (learnServers(&state, from: info), state.currentServer ?? "")
            }
            if !added.isEmpty { emit(.discoveredServers(added)) }
            if info.lameDuckMode { emit(.lameDuck(server: server)) }
        }
    }

    private enum Delivery {
        case none
        case stream(AsyncStream<NATSMessage>.Continuation, subject: String, finish: Bool, dropping: Bool)
        case route(ReplyRoute, token: String)
    }

    /// Hands a message to its subscription's buffer, or to the reply route of its token.
    private func deliver(_ message: NATSMessage) {
        let prefixCount = inboxPrefix.utf8.count + 1
        let delivery = state.withLock { state -> Delivery in
            state.statistics.messagesIn += 1
            state.statistics.bytesIn += message.payload.count
            guard var record = state.subscriptions[message.subscriptionID] else { return .none }
            record.delivered += 1
            let finished = record.max.map { record.delivered >= $0 } ?? false
            state.subscriptions[message.subscriptionID] = finished ? nil : record
            if record.isInbox || record.routeToken != nil {
                let token = record.routeToken ?? String(message.subject.utf8.dropFirst(prefixCount)) ?? ""
                guard let route = state.replies[token] else { return .none }
                if route.oneShot { state.replies[token] = nil }
                return .route(route, token: token)
            }
            guard let continuation = record.continuation else { return .none }
            return .stream(continuation, subject: record.subject, finish: finished, dropping: record.reportedDropping)
        }
        switch delivery {
        case .none:
            break
        case .route(let route, let token):
            if route.onMessage(message), !route.oneShot { cancelRoute(token, reason: nil) }
        case .stream(let continuation, let subject, let finish, let dropping):
            let result = continuation.yield(message)
            if case .dropped = result {
                noteSlowConsumer(message.subscriptionID, subject: subject)
            } else if dropping {
                noteRecovered(message.subscriptionID, subject: subject)
            }
            if finish { continuation.finish() }
        }
    }

    /// Counts a message dropped for a full subscription buffer; the first of a run is reported
    /// at once, the rest when the consumer catches up (or at close).
    private func noteSlowConsumer(_ sid: UInt64, subject: String) {
        let report = state.withLock { state -> Int in
            state.statistics.droppedMessages += 1
            guard var record = state.subscriptions[sid] else { return 1 }
            defer { state.subscriptions[sid] = record }
            if record.reportedDropping {
                record.unreportedDrops += 1
                return 0
            }
            record.reportedDropping = true
            return 1
        }
        if report > 0 { emit(.slowConsumer(subject: subject, dropped: report)) }
    }

    private func noteRecovered(_ sid: UInt64, subject: String) {
        let report = state.withLock { state -> Int in
            guard var record = state.subscriptions[sid], record.reportedDropping else { return 0 }
            let count = record.unreportedDrops
            record.unreportedDrops = 0
            record.reportedDropping = false
            state.subscriptions[sid] = record
            return count
        }
        if report > 0 { emit(.slowConsumer(subject: subject, dropped: report)) }
    }
}
