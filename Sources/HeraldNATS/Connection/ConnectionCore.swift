import Foundation
import HeraldIO
import HeraldSync

/// The shared heart of a ``NATSConnection``: the locked ``CoreState`` callers append to, the
/// wake pipe, and the I/O thread that owns the socket (see `ConnectionCore+Loop.swift`).
///
/// `Sendable`: the mutable state is behind ``state``; the pipe descriptors are immutable and are
/// written only under the lock while the phase is not `.closed`, and closed under it.
final class ConnectionCore: Sendable {
    let options: NATSConnectionOptions
    let state: SyncLock<CoreState>
    let wakeRead: Int32
    let wakeWrite: Int32
    let eventContinuation: AsyncStream<NATSEvent>.Continuation
    let events: AsyncStream<NATSEvent>
    /// `_INBOX.<nuid>`: replies to this connection's requests go under it.
    let inboxPrefix: String

    init(options: NATSConnectionOptions) throws(NATSError) {
        guard !options.servers.isEmpty else { throw .invalidConfiguration("the server list is empty") }
        var servers: [NATSServerAddress] = []
        for text in options.servers { servers.append(try NATSServerAddress(parsing: text)) }
        guard let pipe = try? WakePipe() else {
            throw .invalidConfiguration("cannot open the connection's wake pipe: \(SystemError.text(errno))")
        }
        self.options = options
        var initial = CoreState(servers: servers, policy: ConnectionMachine.Policy(options))
        initial.maxPayload = min(initial.maxPayload, max(options.maxPayload, 1))
        state = SyncLock(initial)
        (wakeRead, wakeWrite) = (pipe.readEnd, pipe.writeEnd)
        (events, eventContinuation) = AsyncStream.makeStream(of: NATSEvent.self)
        inboxPrefix = "_INBOX." + NUID.next()
    }

    /// The largest message the client takes or sends on a server that announced `info`: the
    /// smaller of its `max_payload` and ``NATSConnectionOptions/maxPayload``.
    func payloadLimit(_ info: NATSServerInfo) -> Int {
        max(1, min(info.maxPayload, options.maxPayload))
    }

    /// Wakes the I/O thread unless a wake-up is already on its way. Call with the lock held.
    func wake(_ state: inout CoreState) {
        guard !state.wakePending, state.phase != .closed else { return }
        state.wakePending = true
        WakePipe.signal(wakeWrite)
    }

    func emit(_ event: NATSEvent) {
        eventContinuation.yield(event)
    }

    /// Starts the I/O thread (once) and waits for the first connection; a cancelled task closes
    /// the connection while it is still being made.
    func start() async throws {
        do {
            try await withTaskCancellationHandler {
                try await waitForFirstConnection()
            } onCancel: {
                if state.withLock({ $0.machine.isStarting }) { shutdown() }
            }
        } catch {
            if Task.isCancelled { throw NATSError.cancelled }
            throw error
        }
    }

    private func waitForFirstConnection() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            switch state.withLock({ $0.machine.start(continuation) }) {
            case .startThread:
                NamedThread.start("herald.nats") { [self] in runLoop() }
            case .wait: break
            case .resume(let waiter): waiter.resume()
            case .fail(let waiter): waiter.resume(throwing: NATSError.closed)
            }
        }
    }

    /// Asks the thread to flush and end, and waits until it has.
    func close() async {
        let action = state.withLock { state in
            let action = state.machine.close()
            if action == .wakeThread { wake(&state) }
            return action
        }
        switch action {
        case .none: return
        case .finishHere:
            // Never started: there is no thread to finish it.
            finish(reason: "closed before it connected")
        case .wakeThread, .waitForThread:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLock { $0.machine.waitForClose(continuation) }?.resume()
            }
        }
    }

    /// Asks the thread to end without waiting (the connection object went away).
    func shutdown() {
        let action = state.withLock { state in
            let action = state.machine.shutdown()
            if action == .wakeThread { wake(&state) }
            return action
        }
        if action == .finishHere { finish(reason: "released before it connected") }
    }

    /// Ends everything that waits on the connection; the last thing the thread does.
    func finish(reason: String, connectError: NATSError? = nil) {
        let (records, routes, waiters, drops) = state.withLock { state in
            let waiters = state.machine.finish()
            let records = Array(state.subscriptions.values)
            state.subscriptions.removeAll()
            let routes = Array(state.replies.values)
            state.replies.removeAll()
            state.deadlines.removeAll()
            let drops = state.unreportedDrops
            state.unreportedDrops = (0, 0)
            state.outbound.removeAll()
            WakePipe(readEnd: wakeRead, writeEnd: wakeWrite).close()
            return (records, routes, waiters, drops)
        }
        for record in records {
            if record.unreportedDrops > 0 { emit(.slowConsumer(subject: record.subject, dropped: record.unreportedDrops)) }
            record.continuation?.finish()
        }
        for waiter in waiters.flushWaiters { waiter.resume(throwing: NATSError.closed) }
        for route in routes { route.onEnd(.closed) }
        let error = connectError ?? .closed
        for waiter in waiters.connectWaiters { waiter.resume(throwing: error) }
        if drops.messages > 0 { emit(.dropped(messages: drops.messages, bytes: drops.bytes)) }
        emit(.closed(reason: reason))
        eventContinuation.finish()
        for waiter in waiters.closeWaiters { waiter.resume() }
    }
}
