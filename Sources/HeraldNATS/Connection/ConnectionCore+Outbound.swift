import HeraldSync

/// What callers do: append whole frames to the shared buffer under the lock and wake the thread.
extension ConnectionCore {
    /// Checks that `subject` can be written on a protocol line: non-empty, no white space or
    /// control characters (which would split or end the line).
    static func validate(_ subject: String, as what: String) throws(NATSError) {
        guard !subject.isEmpty else { throw .invalidSubject("the \(what) is empty") }
        guard subject.utf8.allSatisfy({ $0 > 32 && $0 != 127 }) else {
            throw .invalidSubject("the \(what) '\(subject)' contains white space or a control character")
        }
    }

    /// Queues a publish.
    /// - Throws: `.closed`, `.payloadTooLarge`, `.invalidSubject`, or `.bufferFull` while
    ///   disconnected with a full reconnect buffer (also counted in a `.dropped` event).
    func publish(subject: String, reply: String?, headers: NATSHeaders?, payload: UnsafeRawBufferPointer) throws(NATSError) {
        try Self.validate(subject, as: "subject")
        if let reply { try Self.validate(reply, as: "reply subject") }
        try headers?.validate()
        try state.withLock { (state: inout CoreState) throws(NATSError) in
            try appendPublish(&state, subject: subject, reply: reply, headers: headers, payload: payload)
        }
    }

    /// Appends one publish frame with the lock held (see ``publish(subject:reply:headers:payload:)``).
    func appendPublish(
        _ state: inout CoreState, subject: String, reply: String?, headers: NATSHeaders?, payload: UnsafeRawBufferPointer
    ) throws(NATSError) {
        guard state.isAcceptingWork else { throw .closed }
        let size = payload.count + (headers?.encodedCount ?? 0)
        guard size <= state.maxPayload else {
            throw NATSError(kind: .payloadTooLarge, message: "a \(size)-byte message on '\(subject)' exceeds the maximum payload of \(state.maxPayload) bytes (the server's max_payload or the client's maxPayload, the smaller)")
        }
        let before = state.outbound.count
        NATSClientFrames.appendPublish(into: &state.outbound, subject: subject, reply: reply, headers: headers, payload: payload)
        if state.phase == .connected {
            wake(&state)
        } else {
            let frame = state.outbound.count - before
            if state.outbound.count > options.reconnectBufferBytes || state.bufferedMessages >= options.reconnectBufferMessages {
                state.outbound.removeLast(frame)
                state.statistics.droppedPublishes += 1
                state.unreportedDrops.messages += 1
                state.unreportedDrops.bytes += frame
                if !state.reportedDropThisOutage {
                    // The first drop of an outage is reported at once, the rest summed at reconnect.
                    state.reportedDropThisOutage = true
                    emit(.dropped(messages: state.unreportedDrops.messages, bytes: state.unreportedDrops.bytes))
                    state.unreportedDrops = (0, 0)
                }
                throw NATSError(kind: .bufferFull, message: "the publish on '\(subject)' was dropped: the client is disconnected and its buffer of \(options.reconnectBufferMessages) messages / \(options.reconnectBufferBytes) bytes is full")
            }
            state.bufferedMessages += 1
        }
        state.statistics.messagesOut += 1
        state.statistics.bytesOut += payload.count
    }

    /// Registers a subscription and, when connected, sends its `SUB`.
    func subscribe(subject: String, queue: String?) throws(NATSError) -> (UInt64, AsyncStream<NATSMessage>) {
        try Self.validate(subject, as: "subject")
        if let queue { try Self.validate(queue, as: "queue group") }
        let (stream, continuation) = AsyncStream.makeStream(
            of: NATSMessage.self, bufferingPolicy: .bufferingOldest(max(1, options.subscriptionBufferLimit)))
        let sid = try state.withLock { (state: inout CoreState) throws(NATSError) -> UInt64 in
            guard state.isAcceptingWork else { throw .closed }
            let sid = state.nextSID
            state.nextSID += 1
            state.subscriptions[sid] = SubscriptionRecord(subject: subject, queue: queue, continuation: continuation)
            if state.phase == .connected {
                NATSClientFrames.appendSubscribe(into: &state.outbound, subject: subject, queue: queue, sid: sid)
                wake(&state)
            }
            return sid
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(sid: sid, after: nil) }
        return (sid, stream)
    }

    /// Ends a subscription now (`max` nil) or after `max` deliveries in total.
    func unsubscribe(sid: UInt64, after max: Int?) {
        let continuation = state.withLock { state -> AsyncStream<NATSMessage>.Continuation? in
            guard var record = state.subscriptions[sid] else { return nil }
            if let max, record.delivered < max {
                record.max = max
                state.subscriptions[sid] = record
                if state.phase == .connected {
                    NATSClientFrames.appendUnsubscribe(into: &state.outbound, sid: sid, max: max)
                    wake(&state)
                }
                return nil
            }
            state.subscriptions[sid] = nil
            if state.phase == .connected {
                NATSClientFrames.appendUnsubscribe(into: &state.outbound, sid: sid, max: nil)
                wake(&state)
            }
            return record.continuation
        }
        continuation?.finish()
    }

    /// Sends a `PING` and waits for its `PONG`: everything queued before it has been processed
    /// by the server.
    /// - Throws: `.notConnected` between connections, `.closed` after close; a connection that
    ///   drops before the `PONG` fails it with `.notConnected`.
    func flush() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let action = state.withLock { state in
                let action = state.machine.flush(continuation)
                if case .sendPing = action {
                    state.outbound.append(contentsOf: NATSClientFrames.ping)
                    wake(&state)
                }
                return action
            }
            if case .fail(let error) = action { continuation.resume(throwing: error) }
        }
    }

    /// Publishes with a reply subject under this connection's inbox and routes the replies to
    /// `route`'s handlers; the I/O thread ends the route at its deadline.
    /// - Returns: the token (the last token of the reply subject), for ``cancelRoute(_:)``.
    func sendRequest(
        subject: String, headers: NATSHeaders?, payload: UnsafeRawBufferPointer, timeout: Duration, oneShot: Bool,
        onMessage: @escaping @Sendable (NATSMessage) -> Bool, onEnd: @escaping @Sendable (NATSError) -> Void
    ) throws(NATSError) -> String {
        try Self.validate(subject, as: "subject")
        try headers?.validate()
        return try state.withLock { (state: inout CoreState) throws(NATSError) -> String in
            guard state.isAcceptingWork else { throw .closed }
            ensureInbox(&state)
            state.nextToken += 1
            let token = String(state.nextToken, radix: 36)
            let deadline = ContinuousClock.now.advanced(by: timeout)
            try appendPublish(&state, subject: subject, reply: inboxPrefix + "." + token, headers: headers, payload: payload)
            state.replies[token] = ReplyRoute(subject: subject, timeout: timeout, deadline: deadline, oneShot: oneShot,
                                              onMessage: onMessage, onEnd: onEnd)
            state.deadlines.insert(deadline, token)
            // Between connections the thread sleeps until its next attempt: it must see the deadline.
            wake(&state)
            return token
        }
    }

    /// A reply subject with a subscription of its own whose messages go to the given handlers
    /// (a pull request: the messages keep their stream subjects, so the subscription, not the
    /// subject, says where they belong). The route and its subscription end together.
    func openRoute(
        subject: String, timeout: Duration,
        onMessage: @escaping @Sendable (NATSMessage) -> Bool, onEnd: @escaping @Sendable (NATSError) -> Void
    ) throws(NATSError) -> (token: String, replySubject: String) {
        try state.withLock { (state: inout CoreState) throws(NATSError) -> (String, String) in
            guard state.isAcceptingWork else { throw .closed }
            state.nextToken += 1
            let token = String(state.nextToken, radix: 36)
            let replySubject = inboxPrefix + "P." + token
            let sid = state.nextSID
            state.nextSID += 1
            var record = SubscriptionRecord(subject: replySubject, queue: nil, continuation: nil)
            record.routeToken = token
            state.subscriptions[sid] = record
            if state.phase == .connected {
                NATSClientFrames.appendSubscribe(into: &state.outbound, subject: replySubject, queue: nil, sid: sid)
            }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            state.replies[token] = ReplyRoute(subject: subject, timeout: timeout, deadline: deadline, oneShot: false,
                                              onMessage: onMessage, onEnd: onEnd, sid: sid)
            state.deadlines.insert(deadline, token)
            wake(&state)
            return (token, replySubject)
        }
    }

    /// Ends a route early (its waiter was cancelled, or it got what it needed): `onEnd` gets `reason`
    /// unless the route already ended.
    func cancelRoute(_ token: String, reason: NATSError?) {
        let route = state.withLock { removeRoute(token, &$0) }
        if let reason { route?.onEnd(reason) }
    }

    /// Removes a route and its own subscription, with the lock held.
    func removeRoute(_ token: String, _ state: inout CoreState) -> ReplyRoute? {
        guard let route = state.replies.removeValue(forKey: token) else { return nil }
        if let sid = route.sid, state.subscriptions.removeValue(forKey: sid) != nil, state.phase == .connected {
            NATSClientFrames.appendUnsubscribe(into: &state.outbound, sid: sid, max: nil)
            wake(&state)
        }
        return route
    }

    /// Subscribes the wildcard inbox once, with the lock held.
    private func ensureInbox(_ state: inout CoreState) {
        guard state.inboxSID == nil else { return }
        let sid = state.nextSID
        state.nextSID += 1
        state.inboxSID = sid
        let subject = inboxPrefix + ".*"
        var record = SubscriptionRecord(subject: subject, queue: nil, continuation: nil)
        record.isInbox = true
        state.subscriptions[sid] = record
        if state.phase == .connected {
            NATSClientFrames.appendSubscribe(into: &state.outbound, subject: subject, queue: nil, sid: sid)
        }
    }
}
