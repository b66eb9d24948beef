import Foundation

/// A client connection to a NATS server (or cluster), with reconnect.
///
/// The socket lives on a thread the connection owns, which sleeps in `poll(2)`; no call here
/// blocks a thread of Swift's cooperative pool. ``publish(_:headers:payload:)`` only appends the
/// frame to a write buffer the thread flushes in large writes, so it is cheap and never
/// suspends; ``flush()`` waits until the server has processed everything before it.
///
/// Lifecycle: ``connect()`` starts the thread and returns once the first server accepted;
/// when a connection drops the client moves through the server list (and the servers the
/// cluster announced) with ``NATSConnectionOptions/reconnectDelay`` between attempts,
/// subscribes again, and sends what was published meanwhile (up to the reconnect buffer; what
/// does not fit is refused and reported). ``close()`` flushes and ends it all. Everything that
/// happens is reported on ``events``. `Sendable`.
public final class NATSConnection: Sendable {
    let core: ConnectionCore

    /// A connection with the given options; nothing happens until ``connect()``.
    /// - Throws: ``NATSError`` `.invalidConfiguration` for an empty or malformed server list.
    public init(options: NATSConnectionOptions) throws(NATSError) {
        core = try ConnectionCore(options: options)
    }

    /// A connection to the given servers with default options.
    public convenience init(servers: [String], name: String? = nil) throws(NATSError) {
        try self.init(options: NATSConnectionOptions(servers: servers, name: name))
    }

    deinit {
        core.shutdown()
    }

    /// The options the connection was made with.
    public var options: NATSConnectionOptions { core.options }

    /// Connection events: connected, disconnected, reconnected, drops, server errors, closed.
    /// One consumer; the stream ends after ``NATSEvent/closed(reason:)``.
    public var events: AsyncStream<NATSEvent> { core.events }

    /// Connects to the first server of the list that accepts (INFO, CONNECT, PING/PONG).
    /// Calling it again while connected returns at once. Cancelling the calling task while the
    /// first connection is being made closes the connection (for every caller waiting here).
    /// - Throws: ``NATSError`` `.connectionFailed` listing each server's reason when none
    ///   accepted (unless ``NATSConnectionOptions/retryOnFailedConnect``), `.cancelled` when the
    ///   task was cancelled, `.closed` after close.
    public func connect() async throws {
        try await core.start()
    }

    /// Publishes a message; returns once it is queued for the I/O thread.
    /// - Parameters:
    ///   - subject: where to publish (no wildcards, no white space).
    ///   - reply: a subject the receiver should answer on.
    ///   - headers: sent with `HPUB` when given.
    /// - Throws: ``NATSError``: `.invalidSubject`, `.payloadTooLarge` (over the server's
    ///   `max_payload` or ``NATSConnectionOptions/maxPayload``), `.bufferFull` while disconnected with a full buffer (also reported as a
    ///   ``NATSEvent/dropped(messages:bytes:)``), `.closed`.
    public func publish(_ subject: String, reply: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8] = []) throws(NATSError) {
        try Self.publishing(payload) { (bytes) throws(NATSError) in
            try core.publish(subject: subject, reply: reply, headers: headers, payload: bytes)
        }
    }

    /// Publishes a message whose body is `Data` (see ``publish(_:reply:headers:payload:)-([UInt8])``).
    public func publish(_ subject: String, reply: String? = nil, headers: NATSHeaders? = nil, payload: Data) throws(NATSError) {
        try Self.publishing(payload) { (bytes) throws(NATSError) in
            try core.publish(subject: subject, reply: reply, headers: headers, payload: bytes)
        }
    }

    /// Runs `body` on the bytes of `payload`, keeping its typed error (`withUnsafeBytes` rethrows untyped).
    static func publishing<T>(_ payload: some ContiguousBytes, _ body: (UnsafeRawBufferPointer) throws(NATSError) -> T) throws(NATSError) -> T {
        let result = payload.withUnsafeBytes { bytes -> Result<T, NATSError> in
            do throws(NATSError) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Waits until the server has processed everything published and subscribed before (a
    /// `PING` and its `PONG`).
    /// - Throws: ``NATSError`` `.notConnected` between connections (or when the connection
    ///   drops before the answer), `.closed`.
    public func flush() async throws {
        try await core.flush()
    }

    /// Subscribes to a subject or pattern (`*` one token, `>` the rest), optionally in a queue
    /// group (each message goes to one member). The `SUB` is queued before this returns, so
    /// messages this connection publishes afterwards are delivered; call ``flush()`` before
    /// relying on messages from other connections.
    /// - Throws: ``NATSError`` `.invalidSubject`, `.closed`. A subject the server rejects
    ///   (`foo..bar`) comes back as ``NATSEvent/serverError(_:)``.
    public func subscribe(_ subject: String, queue: String? = nil) throws(NATSError) -> NATSSubscription {
        let (sid, stream) = try core.subscribe(subject: subject, queue: queue)
        return NATSSubscription(subject: subject, queue: queue, sid: sid, stream: stream, core: core)
    }

    /// Sends a request and waits for the first reply. Replies come to one wildcard inbox
    /// subscription (`_INBOX.<nuid>.*`) shared by all requests, each with its own token.
    /// - Parameter timeout: the wait (enforced by the I/O thread); by default
    ///   ``NATSConnectionOptions/requestTimeout``.
    /// - Throws: ``NATSError`` `.noResponders` when nobody is subscribed (the server's 503),
    ///   `.payloadTooLarge` for a reply larger than the connection takes (see
    ///   ``NATSMessage/oversize``), `.timeout`, `.cancelled` when the calling task is cancelled, `.closed`, and the errors
    ///   of ``publish(_:reply:headers:payload:)-([UInt8])``.
    public func request(_ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil, timeout: Duration? = nil) async throws -> NATSMessage {
        let box = TokenBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<NATSMessage, any Error>) in
                do {
                    let token = try payload.withUnsafeBytes { (bytes) throws(NATSError) in
                        try core.sendRequest(
                            subject: subject, headers: headers, payload: bytes, timeout: timeout ?? core.options.requestTimeout,
                            oneShot: true,
                            onMessage: { message in
                                if message.status == 503 {
                                    continuation.resume(throwing: NATSError.noResponders(subject))
                                } else if let size = message.oversize {
                                    continuation.resume(throwing: NATSError(
                                        kind: .payloadTooLarge,
                                        message: "the \(size)-byte reply to '\(subject)' exceeds the maximum payload this connection takes; it was passed over unread"))
                                } else {
                                    continuation.resume(returning: message)
                                }
                                return true
                            },
                            onEnd: { continuation.resume(throwing: $0) })
                    }
                    box.set(token)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            if let token = box.take() { core.cancelRoute(token, reason: .cancelled) }
        }
    }

    /// Flushes what is queued (within the connect timeout), closes the socket, ends every
    /// subscription and fails every waiter with `.closed`. Returns once the thread has ended.
    public func close() async {
        await core.close()
    }

    /// Whether a connection is up now.
    public var isConnected: Bool { core.state.withLock { $0.phase == .connected } }

    /// Why the connection is not known to be healthy: the reason the last connection was lost or
    /// the last attempt failed (`host:port: reason`), until a connection answers a PING sent
    /// after its handshake; nil while healthy. A request that timed out meanwhile can name this
    /// as its cause.
    public var connectionProblem: String? { core.state.withLock { $0.machine.problem } }

    /// Counters: messages and bytes in and out, reconnects, drops.
    public var statistics: NATSConnectionStatistics { core.state.withLock { $0.statistics } }
}
