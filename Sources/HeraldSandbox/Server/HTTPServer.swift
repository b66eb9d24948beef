import Foundation

/// A small HTTP/1.1 server on POSIX sockets: one thread accepts, one thread per connection, at
/// most ``HTTPServerLimits/maxConnections`` of them.
///
/// Threads (not tasks) because every socket call here blocks. Each wait also watches a stop
/// pipe, so `stop()` wakes every thread at once instead of each polling a flag.
final class HTTPServer: Sendable {
    typealias Handler = @Sendable (SandboxRequest) -> SandboxResponse

    /// Injection points for tests.
    struct Seams: Sendable {
        /// Monotonic time for the head and idle deadlines.
        var uptime: @Sendable () -> Duration = HTTPServer.monotonicUptime
        /// The accept(2) call.
        var accept: Socket.AcceptCall = Socket.systemAccept
        /// Called with each wait after a failed accept instead of waiting (the server waits on
        /// its stop pipe when nil).
        var backoff: (@Sendable (Duration) -> Void)?

        init() {}
    }

    /// What the server is doing, as ``waitUntil(_:)`` conditions see it.
    struct Snapshot: Sendable {
        var stopping: Bool
        var requests: Int
        /// The phase of each open connection.
        var connections: [HTTPRequestReader.Phase]
        var bufferedBodyBytes: Int
    }

    private struct Connection {
        var fd: Int32
        var phase: HTTPRequestReader.Phase
    }

    private enum Lifecycle {
        case created
        case running
        case stopping
    }

    private struct Waiter {
        var condition: @Sendable (Snapshot) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var lifecycle = Lifecycle.created
        /// Open connections by a serial number, never by descriptor: a descriptor number is
        /// reused as soon as it is closed.
        var connections: [Int: Connection] = [:]
        var nextConnection = 0
        var bufferedBodyBytes = 0
        var requests = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        var snapshot: Snapshot {
            Snapshot(stopping: lifecycle == .stopping, requests: requests, connections: connections.values.map(\.phase),
                     bufferedBodyBytes: bufferedBodyBytes)
        }

        /// Removes and returns the waiters whose condition holds (all of them once stopping).
        mutating func releasableWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            let now = snapshot
            let ready = waiters.filter { now.stopping || $0.value.condition(now) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    let port: Int
    let limits: HTTPServerLimits
    private let listenFD: Int32
    private let wake: (read: Int32, write: Int32)
    private let handler: Handler
    private let seams: Seams
    private let state = Locked(State())
    private let running = DispatchGroup()

    private static let origin = ContinuousClock.now
    static let monotonicUptime: @Sendable () -> Duration = { ContinuousClock.now - origin }

    init(port: Int, limits: HTTPServerLimits = HTTPServerLimits(), seams: Seams = Seams(), handler: @escaping Handler) throws(SandboxError) {
        let (fd, actualPort) = try Socket.listen(port: port)
        do {
            wake = try Socket.makeWakePipe()
        } catch {
            Socket.close(fd)
            throw error
        }
        self.listenFD = fd
        self.port = actualPort
        self.limits = limits
        self.seams = seams
        self.handler = handler
    }

    func start() {
        let starting = state.withLock { state -> Bool in
            guard state.lifecycle == .created else { return false }
            state.lifecycle = .running
            return true
        }
        guard starting else { return }
        running.enter()
        let thread = Thread { [self] in
            acceptLoop()
            running.leave()
        }
        thread.name = "sandbox-accept"
        thread.start()
    }

    /// Stops accepting, closes every connection and waits for all threads to end. A second
    /// call waits for the same end.
    func stop() async {
        let (first, wasRunning) = mutate { state -> (Bool, Bool) in
            guard state.lifecycle != .stopping else { return (false, false) }
            let wasRunning = state.lifecycle == .running
            state.lifecycle = .stopping
            // Under the lock: a connection leaves `connections` under it before its thread
            // closes the descriptor, so no number reused by another socket is shut down.
            // Shutdown (not close) also wakes a thread blocked writing to a client that does
            // not read.
            for connection in state.connections.values { Socket.shutdownBoth(connection.fd) }
            return (true, wasRunning)
        }
        if first {
            Socket.signalWake(wake.write)
            if !wasRunning { Socket.close(listenFD) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { continuation.resume() }
        }
        if first {
            Socket.close(wake.read)
            Socket.close(wake.write)
        }
    }

    private var isStopping: Bool { state.withLock { $0.lifecycle == .stopping } }

    var requestsReceived: Int { state.withLock { $0.requests } }

    /// Returns once `count` requests have been received, the server stops, or the calling
    /// task is cancelled: tests await a request instead of sleeping.
    func waitForRequests(_ count: Int) async {
        await waitUntil { $0.requests >= count }
    }

    /// Returns once `condition` holds, the server stops, or the calling task is cancelled.
    func waitUntil(_ condition: @escaping @Sendable (Snapshot) -> Bool) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    let now = state.snapshot
                    if now.stopping || condition(now) || Task.isCancelled { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// Changes the state, then resumes the waiters the change satisfied (outside the lock).
    private func mutate<Result>(_ body: (inout State) -> Result) -> Result {
        let (result, waiters) = state.withLock { state -> (Result, [CheckedContinuation<Void, Never>]) in
            let result = body(&state)
            return (result, state.releasableWaiters())
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    // MARK: - Accepting

    private func acceptLoop() {
        defer { Socket.close(listenFD) }
        var backoff = AcceptBackoff()
        while true {
            switch Socket.wait(listenFD, wake: wake.read, milliseconds: -1) {
            case .woken: return
            case .timedOut: continue  // a signal interrupted the wait
            case .readable: break
            }
            switch Socket.accept(listenFD, call: seams.accept) {
            case .connection(let fd):
                backoff.succeeded()
                guard admit(fd) else { return }
            case .retry:
                continue
            case .outOfResources, .failed:
                // The connection stays pending, so poll(2) says readable again at once: only a
                // wait keeps this loop from spinning until descriptors free up.
                let delay = backoff.failed()
                if let injected = seams.backoff {
                    injected(delay)
                } else if !pause(delay) {
                    return
                }
            }
        }
    }

    private enum Admission {
        case admitted(Int)
        case full
        case stopping
    }

    /// Serves `fd` on a thread of its own, or answers 503 when ``HTTPServerLimits/maxConnections``
    /// are open; false when the server is stopping.
    private func admit(_ fd: Int32) -> Bool {
        let admission = mutate { state -> Admission in
            guard state.lifecycle == .running else { return .stopping }
            guard state.connections.count < limits.maxConnections else { return .full }
            state.nextConnection += 1
            state.connections[state.nextConnection] = Connection(fd: fd, phase: .idle)
            return .admitted(state.nextConnection)
        }
        switch admission {
        case .stopping:
            Socket.close(fd)
            return false
        case .full:
            let response = SandboxResponse.json(
                503, .object([("error", .string("too many connections; retry later"))]), headers: [("Retry-After", "1")])
            Socket.refuse(fd, with: ResponseWriter.bytes(of: response, close: true))
            return true
        case .admitted(let id):
            running.enter()
            let thread = Thread { [self] in
                serve(id, fd)
                mutate { state in
                    _ = state.connections.removeValue(forKey: id)
                }
                // Closed only after it left `connections`: see stop().
                Socket.close(fd)
                running.leave()
            }
            thread.name = "sandbox-connection"
            thread.start()
            return true
        }
    }

    // MARK: - Serving

    private func serve(_ id: Int, _ fd: Int32) {
        var reader = HTTPRequestReader(HTTPRequestReader.Environment(
            fd: fd, wake: wake.read, limits: limits, uptime: seams.uptime,
            phaseChanged: { [self] phase in mutate { $0.connections[id]?.phase = phase } },
            reserve: { [self] count in
                mutate { state in
                    guard count <= limits.maxBufferedBodyBytes - state.bufferedBodyBytes else { return false }
                    state.bufferedBodyBytes += count
                    return true
                }
            },
            release: { [self] count in mutate { $0.bufferedBodyBytes -= count } }))
        defer { reader.releaseBody() }
        while true {
            let request: SandboxRequest
            switch reader.next() {
            case .request(let received):
                request = received
            case .closed:
                return
            case .rejected(let rejection):
                // Not held while the refusal lingers.
                reader.releaseBody()
                reject(fd, rejection)
                return
            }
            mutate { state in
                state.requests += 1
                state.connections[id]?.phase = .handling
            }
            let response = handler(request)
            if response.closesIdleConnections { closeIdleConnections() }
            guard pause(response.delay), response.delivery != .drop else { return }
            let close = request.wantsClose || response.closesConnection
            let written = ResponseWriter.write(
                response, to: fd, close: close, withoutBody: request.method == "HEAD", pause: pause)
            guard written, !close else { return }
        }
    }

    /// Bytes read and dropped after a refusal at most (read in 64 KiB pieces, never held).
    static let maxDrainedBytes = 16 * 1024 * 1024

    /// Answers a refused request and closes gracefully: the rest of what the client sent is
    /// read (for a bounded time) after our FIN, so the close does not reset the connection and
    /// discard the answer before the client reads it.
    private func reject(_ fd: Int32, _ rejection: HTTPRejection) {
        let headers: [(name: String, value: String)] = rejection.status == 503 ? [("Retry-After", "1")] : []
        let response = SandboxResponse.json(rejection.status, .object([("error", .string(rejection.reason))]), headers: headers)
        guard ResponseWriter.write(response, to: fd, close: true) else { return }
        Socket.shutdownWriting(fd)
        let deadline = ContinuousClock.now + .seconds(1)
        var drained = 0
        while drained < Self.maxDrainedBytes, case let left = deadline - ContinuousClock.now, left > .zero,
              Socket.wait(fd, wake: wake.read, milliseconds: Socket.pollMilliseconds(left)) == .readable,
              let bytes = Socket.read(fd) {
            drained += bytes.count
        }
    }
}

extension HTTPServer {
    /// Closes every keep-alive connection that is waiting for its next request, so a client's
    /// next request opens a new one. A scripted drop needs that: libcurl (URLSession on Linux)
    /// silently resends a request whose reused connection closed without an answer, which would
    /// hide the drop and consume the next outcome, or hang a POST.
    func closeIdleConnections() {
        state.withLock { state in
            // Under the lock, like stop(): see there.
            for connection in state.connections.values where connection.phase == .idle {
                Socket.shutdownBoth(connection.fd)
            }
        }
    }

    /// Waits `duration` (real time); false as soon as the server is stopping, so an injected
    /// latency never delays `stop()`.
    func pause(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return !isStopping }
            if Socket.wait(-1, wake: wake.read, milliseconds: Socket.pollMilliseconds(left)) == .woken { return false }
        }
    }
}
