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
        var initial = CoreState(servers: servers)
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
                let connecting = state.withLock { $0.phase == .idle || $0.phase == .connecting }
                if connecting { shutdown() }
            }
        } catch {
            if Task.isCancelled { throw NATSError.cancelled }
            throw error
        }
    }

    private func waitForFirstConnection() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Start { case thread, wait, connected, closed }
            let start = state.withLock { state -> Start in
                switch state.phase {
                case .idle:
                    state.phase = .connecting
                    state.connectWaiters.append(continuation)
                    return .thread
                case .connecting:
                    state.connectWaiters.append(continuation)
                    return .wait
                case .connected, .reconnecting: return .connected
                case .closing, .closed: return .closed
                }
            }
            switch start {
            case .thread:
                NamedThread.start("herald.nats") { [self] in runLoop() }
            case .wait: break
            case .connected: continuation.resume()
            case .closed: continuation.resume(throwing: NATSError.closed)
            }
        }
    }

    /// Asks the thread to flush and end, and waits until it has.
    func close() async {
        enum Close { case done, finishHere, wait }
        let action = state.withLock { state -> Close in
            switch state.phase {
            case .closed: return .done
            case .idle:
                state.phase = .closing
                return .finishHere
            case .closing: return .wait
            default:
                state.phase = .closing
                wake(&state)
                return .wait
            }
        }
        switch action {
        case .done: return
        case .finishHere:
            // Never started: there is no thread to finish it.
            finish(reason: "closed before it connected")
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.phase == .closed { return true }
                    state.closeWaiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Asks the thread to end without waiting (the connection object went away).
    func shutdown() {
        let idle = state.withLock { state -> Bool in
            if state.phase == .idle {
                state.phase = .closing
                return true
            }
            if state.phase != .closed {
                state.phase = .closing
                wake(&state)
            }
            return false
        }
        if idle { finish(reason: "released before it connected") }
    }

    /// Ends everything that waits on the connection; the last thing the thread does.
    func finish(reason: String, connectError: NATSError? = nil) {
        let (records, pongs, routes, connectWaiters, closeWaiters, drops) = state.withLock { state in
            state.phase = .closed
            let records = Array(state.subscriptions.values)
            state.subscriptions.removeAll()
            let pongs = state.pongWaiters
            state.pongWaiters.removeAll()
            let routes = Array(state.replies.values)
            state.replies.removeAll()
            state.deadlines.removeAll()
            let connectWaiters = state.connectWaiters
            state.connectWaiters.removeAll()
            let closeWaiters = state.closeWaiters
            state.closeWaiters.removeAll()
            let drops = state.unreportedDrops
            state.unreportedDrops = (0, 0)
            state.outbound.removeAll()
            WakePipe(readEnd: wakeRead, writeEnd: wakeWrite).close()
            return (records, pongs, routes, connectWaiters, closeWaiters, drops)
        }
        for record in records {
            if record.unreportedDrops > 0 { emit(.slowConsumer(subject: record.subject, dropped: record.unreportedDrops)) }
            record.continuation?.finish()
        }
        for pong in pongs { if case .client(let continuation) = pong { continuation.resume(throwing: NATSError.closed) } }
        for route in routes { route.onEnd(.closed) }
        let error = connectError ?? .closed
        for waiter in connectWaiters { waiter.resume(throwing: error) }
        if drops.messages > 0 { emit(.dropped(messages: drops.messages, bytes: drops.bytes)) }
        emit(.closed(reason: reason))
        eventContinuation.finish()
        for waiter in closeWaiters { waiter.resume() }
    }
}
