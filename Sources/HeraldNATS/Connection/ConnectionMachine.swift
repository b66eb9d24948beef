/// The decisions of a connection's life, apart from the socket, the thread and the lock: its
/// phase, who waits on it (the first connection, a close, each PONG), when to give up
/// reconnecting and when the backoff starts over, and why the connection is unwell.
///
/// It lives in ``CoreState``, behind the connection's lock; every method returns what
/// ``ConnectionCore`` must do after the lock (resume continuations, start the thread, finish).
/// The backoff restarts only after a connection proved healthy (its PONG to the PING sent after
/// the handshake came, and it stayed up for ``Policy/healthyUptime``); the reason a connection
/// was lost or an attempt failed stays in ``problem`` until one does, and the last one is in
/// the reason of a final give-up. ``Liveness``, the I/O thread's own, decides the pings.
struct ConnectionMachine {
    /// Where the connection is in its life.
    enum Phase: Equatable {
        /// Not started: ``NATSConnection/connect()`` has not been called.
        case idle
        /// The first connection is being made.
        case connecting
        /// A connection is up; frames go to the socket.
        case connected
        /// Between connections, after the backoff; publishes wait in the bounded buffer.
        case reconnecting
        /// ``NATSConnection/close()`` was called; the thread flushes what was queued and ends.
        case closing
        /// The thread has ended.
        case closed
    }

    /// Who waits for the next PONG, in the order the PINGs went out.
    enum PongWaiter {
        case client(CheckedContinuation<Void, any Error>)
        case keepAlive
        /// The PING sent after the handshake: its PONG proves the connection healthy.
        case health
    }

    /// What the machine needs of ``NATSConnectionOptions``.
    struct Policy {
        var allowReconnect: Bool
        var maxReconnectAttempts: Int?
        var retryOnFailedConnect: Bool
        var healthyUptime: Duration

        /// The options' defaults.
        init() {
            self.init(NATSConnectionOptions(servers: []))
        }

        init(_ options: NATSConnectionOptions) {
            allowReconnect = options.allowReconnect
            maxReconnectAttempts = options.maxReconnectAttempts
            retryOnFailedConnect = options.retryOnFailedConnect
            healthyUptime = options.healthyUptime
        }
    }

    let policy: Policy
    private(set) var phase = Phase.idle
    private(set) var connectWaiters: [CheckedContinuation<Void, any Error>] = []
    private(set) var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private(set) var pongWaiters: [PongWaiter] = []
    /// Why the last connection was lost or the last attempt failed, until a connection proves
    /// healthy again.
    private(set) var problem: String?
    /// Attempts that failed (or connections that were not healthy) since the last healthy one.
    private(set) var failures = 0
    private(set) var everConnected = false
    /// How many servers were tried; the next is `servers[attempts % count]`.
    private(set) var attempts = 0
    /// Why each server refused the first connection, for the error when all did.
    private(set) var firstPassReasons: [String] = []
    /// When the current connection came up, and whether it answered the health PING.
    private(set) var connectedAt: ContinuousClock.Instant?
    private(set) var isHealthy = false

    init(policy: Policy = Policy()) {
        self.policy = policy
    }

    var isConnected: Bool { phase == .connected }
    /// Callers may still queue work (publish, subscribe, request).
    var isAcceptingWork: Bool { phase != .closing && phase != .closed }
    var isClosing: Bool { phase == .closing || phase == .closed }
    /// The first connection is not made yet: a cancelled ``NATSConnection/connect()`` closes it.
    var isStarting: Bool { phase == .idle || phase == .connecting }

    // MARK: - Starting and closing

    /// What a caller of ``NATSConnection/connect()`` does.
    enum StartAction {
        /// Start the I/O thread; the caller waits (it was kept).
        case startThread
        /// The thread runs; the caller waits (it was kept).
        case wait
        /// Connected already (or between connections): resume it.
        case resume(CheckedContinuation<Void, any Error>)
        /// Closed: fail it with ``NATSError/closed``.
        case fail(CheckedContinuation<Void, any Error>)
    }

    /// A caller waits for the first connection.
    mutating func start(_ waiter: CheckedContinuation<Void, any Error>) -> StartAction {
        switch phase {
        case .idle:
            phase = .connecting
            connectWaiters.append(waiter)
            return .startThread
        case .connecting:
            connectWaiters.append(waiter)
            return .wait
        case .connected, .reconnecting: return .resume(waiter)
        case .closing, .closed: return .fail(waiter)
        }
    }

    /// What ``close()`` and ``shutdown()`` ask of the connection.
    enum CloseAction: Equatable {
        /// Nothing to do: closed already (``close()``), or closing already (``shutdown()``).
        case none
        /// Never started: there is no thread; finish here.
        case finishHere
        /// Wake the thread, which flushes and finishes.
        case wakeThread
        /// The thread is finishing already.
        case waitForThread
    }

    /// The client closes the connection.
    mutating func close() -> CloseAction {
        switch phase {
        case .closed: return .none
        case .idle:
            phase = .closing
            return .finishHere
        case .closing: return .waitForThread
        case .connecting, .connected, .reconnecting:
            phase = .closing
            return .wakeThread
        }
    }

    /// The connection object went away: as ``close()``, but nobody waits.
    mutating func shutdown() -> CloseAction {
        switch phase {
        case .idle:
            phase = .closing
            return .finishHere
        case .closed: return .none
        case .closing, .connecting, .connected, .reconnecting:
            phase = .closing
            return .wakeThread
        }
    }

    /// A caller of ``close()`` waits for the thread to end; returns it to resume now if it has.
    mutating func waitForClose(_ waiter: CheckedContinuation<Void, Never>) -> CheckedContinuation<Void, Never>? {
        if phase == .closed { return waiter }
        closeWaiters.append(waiter)
        return nil
    }

    /// Everyone who waits when the connection ends.
    struct Finished {
        /// Fail these with the connect error (or ``NATSError/closed``).
        var connectWaiters: [CheckedContinuation<Void, any Error>]
        /// Fail these with ``NATSError/closed``.
        var flushWaiters: [CheckedContinuation<Void, any Error>]
        /// Resume these last.
        var closeWaiters: [CheckedContinuation<Void, Never>]
    }

    /// The connection ended (the thread's last act, or a close before it started).
    mutating func finish() -> Finished {
        phase = .closed
        let finished = Finished(connectWaiters: connectWaiters, flushWaiters: takeClientPongs(),
                                closeWaiters: closeWaiters)
        connectWaiters = []
        closeWaiters = []
        return finished
    }

    // MARK: - Connections

    /// A connection is up (after its handshake, at `now`): it waits for the health PONG; nil
    /// when a close came meanwhile (the close wins, and the waiters are left to ``finish()``).
    mutating func connected(at now: ContinuousClock.Instant) -> (first: Bool, waiters: [CheckedContinuation<Void, any Error>])? {
        guard phase != .closing else { return nil }
        phase = .connected
        pongWaiters.append(.health)
        connectedAt = now
        isHealthy = false
        let first = !everConnected
        everConnected = true
        defer { connectWaiters = [] }
        return (first, connectWaiters)
    }

    /// What the loop does after a connection or an attempt ended.
    enum NextStep: Equatable {
        /// Try the next server, after ``backoff`` when it is not zero failures.
        case reconnect
        /// Stop trying: finish with this reason, failing the first connection's waiters with the
        /// error when there is one.
        case giveUp(reason: String, connectError: NATSError?)
    }

    /// A connection to `server` was lost at `now` for `reason`: flush waiters fail (returned),
    /// and the phase moves to reconnecting unless a close came meanwhile (the loop then
    /// finishes). The backoff restarts only if the connection was healthy.
    mutating func disconnected(from server: String, reason: String, at now: ContinuousClock.Instant)
        -> (failPongs: [CheckedContinuation<Void, any Error>], next: NextStep)
    {
        if phase != .closing { phase = .reconnecting }
        problem = Self.naming(server, reason)
        let pongs = takeClientPongs()
        let uptime = connectedAt.map { $0.duration(to: now) } ?? .zero
        let healthy = isHealthy && uptime >= policy.healthyUptime
        connectedAt = nil
        isHealthy = false
        guard policy.allowReconnect else {
            return (pongs, .giveUp(reason: "disconnected and reconnecting is off: \(reason)", connectError: nil))
        }
        // A server that takes the handshake (or answers the health PING) and then closes, sends
        // garbage or announces an oversized message counts as a failure.
        if healthy {
            failures = 0
        } else {
            failures += 1
            if let limit = policy.maxReconnectAttempts, failures >= limit {
                return (pongs, .giveUp(reason: "\(failures) reconnect attempts failed; the last: \(server): \(reason)",
                                       connectError: nil))
            }
        }
        return (pongs, .reconnect)
    }

    /// `text` led by the server it is about, once: the client's connection errors already name
    /// their server ("a:4222: connection refused"), and the problem said it twice.
    static func naming(_ server: String, _ text: String) -> String {
        text.hasPrefix(server + ": ") ? text : "\(server): \(text)"
    }

    /// An attempt to connect to `server` failed with `message`; `serverCount` servers are known.
    mutating func attemptFailed(server: String, message: String, serverCount: Int) -> NextStep {
        failures += 1
        problem = Self.naming(server, message)
        if !everConnected {
            firstPassReasons.append(message)
            if !policy.retryOnFailedConnect, failures >= serverCount {
                let reason = "no server accepted the connection: " + firstPassReasons.joined(separator: "; ")
                return .giveUp(reason: reason, connectError: .connectionFailed(reason))
            }
        } else if let limit = policy.maxReconnectAttempts, failures >= limit {
            return .giveUp(reason: "\(failures) reconnect attempts failed; the last: \(message)", connectError: nil)
        }
        return .reconnect
    }

    /// The attempt to make next: the index of its server among `serverCount`, and the failures
    /// so far, whose backoff comes first when there are any.
    mutating func nextAttempt(serverCount: Int) -> (server: Int, failures: Int) {
        defer { attempts += 1 }
        return (attempts % max(serverCount, 1), failures)
    }

    // MARK: - PINGs and PONGs

    /// What ``NATSConnection/flush()`` does.
    enum FlushAction {
        /// Send a PING (the waiter was kept for its PONG).
        case sendPing
        /// Fail the waiter with this error.
        case fail(NATSError)
    }

    /// A caller waits for the PONG of a PING it sends.
    mutating func flush(_ waiter: CheckedContinuation<Void, any Error>) -> FlushAction {
        switch phase {
        case .connected:
            pongWaiters.append(.client(waiter))
            return .sendPing
        case .closing, .closed: return .fail(.closed)
        case .idle, .connecting, .reconnecting: return .fail(.notConnected)
        }
    }

    /// The I/O thread sends a keep-alive PING (see ``Liveness``).
    mutating func keepAlivePingSent() {
        pongWaiters.append(.keepAlive)
    }

    /// A PONG came: the waiter of the oldest PING, to resume, if a caller's. The health PONG
    /// marks the connection healthy and clears the problem.
    mutating func pongReceived() -> CheckedContinuation<Void, any Error>? {
        guard !pongWaiters.isEmpty else { return nil }
        switch pongWaiters.removeFirst() {
        case .client(let waiter): return waiter
        case .health:
            isHealthy = true
            problem = nil
            return nil
        case .keepAlive: return nil
        }
    }

    private mutating func takeClientPongs() -> [CheckedContinuation<Void, any Error>] {
        defer { pongWaiters.removeAll() }
        return pongWaiters.compactMap { if case .client(let waiter) = $0 { waiter } else { nil } }
    }

    /// The keep-alive of one connection, owned by the I/O thread: a PING every `interval`, a
    /// stale connection after `maxOutstanding` unanswered, and a PING at once when a request
    /// times out (a server that stopped answering is found before anyone hears of the timeout).
    struct Liveness {
        let interval: Duration
        let maxOutstanding: Int
        private(set) var outstanding = 0
        /// When the next PING is due.
        private(set) var nextPing: ContinuousClock.Instant

        init(interval: Duration, maxOutstanding: Int, from now: ContinuousClock.Instant) {
            self.interval = interval
            self.maxOutstanding = maxOutstanding
            nextPing = now.advanced(by: interval)
        }

        /// What to do about PINGs at `now`.
        enum Action: Equatable {
            case none
            /// Send a keep-alive PING.
            case ping
            /// The connection is stale: drop it for this reason.
            case stale(String)
        }

        /// The loop woke at `now`: a PING is due, or too many went unanswered.
        mutating func tick(at now: ContinuousClock.Instant) -> Action {
            guard now >= nextPing else { return .none }
            if outstanding >= maxOutstanding {
                return .stale("the server did not answer \(outstanding) pings (stale connection)")
            }
            outstanding += 1
            nextPing = now.advanced(by: interval)
            return .ping
        }

        /// A request timed out at `now`: true to send a PING at once (none is outstanding).
        mutating func requestTimedOut(at now: ContinuousClock.Instant) -> Bool {
            guard outstanding == 0 else { return false }
            outstanding = 1
            nextPing = now.advanced(by: interval)
            return true
        }

        /// Any PONG: the server answers.
        mutating func pong() {
            outstanding = 0
        }
    }
}
