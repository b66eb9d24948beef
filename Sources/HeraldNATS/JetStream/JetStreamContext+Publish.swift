/// Publishing to a stream with the stream's acknowledgement.
extension JetStreamContext {
    /// Publishes and waits for the stream's ack.
    /// - Throws: ``JetStreamError`` (an expectation failed: 10071 wrong last sequence, ...),
    ///   ``NATSError`` `.noResponders` when no stream takes the subject, `.timeout`.
    public func publish(_ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil,
                        options: JetStreamPublishOptions = JetStreamPublishOptions()) async throws -> PubAck {
        let reply = try await request(subject, payload: payload, headers: options.applied(to: headers))
        return try Self.pubAck(from: reply, subject: subject)
    }

    /// Publishes without waiting for the ack; returns once the message is queued and holds a
    /// slot of the window (``JetStreamContext/init(connection:domain:timeout:maxPendingPublishes:)``),
    /// waiting first while the window is full. Await ``JetStreamPublishFuture/value`` for the
    /// ack, or ``waitForPendingPublishes()`` for all of them.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): a publish that finds a free
    /// slot never suspends and never hops to another thread.
    /// - Throws: only what stops the publish being queued (``NATSError`` `.closed`, `.bufferFull`,
    ///   `.invalidSubject`); a refused or lost publish fails its future.
    nonisolated(nonsending) public func publishAsync(_ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil,
                             options: JetStreamPublishOptions = JetStreamPublishOptions()) async throws -> JetStreamPublishFuture {
        await window.acquire()
        let future = JetStreamPublishFuture(subject: subject)
        let window = self.window
        do {
            _ = try NATSConnection.publishing(payload) { (bytes) throws(NATSError) in
                try connection.core.sendRequest(
                    subject: subject, headers: options.applied(to: headers), payload: bytes, timeout: timeout, oneShot: true,
                    onMessage: { message in
                        future.complete(Result { try Self.pubAck(from: message, subject: subject) })
                        window.release()
                        return true
                    },
                    onEnd: { error in
                        future.complete(.failure(error))
                        window.release()
                    })
            }
        } catch {
            window.release()
            throw error
        }
        return future
    }

    /// Returns once every async publish of this context has its ack (or its error).
    nonisolated(nonsending) public func waitForPendingPublishes() async {
        await window.waitUntilEmpty()
    }

    /// Async publishes awaiting their acks.
    public var pendingPublishes: Int { window.pending }

    static func pubAck(from message: NATSMessage, subject: String) throws -> PubAck {
        if message.status == 503 { throw NATSError.noResponders(subject) }
        if let ack = PubAck.scan(message.payload) { return ack }
        return try decode(PubAck.self, from: message.payload, subject: subject)
    }
}
