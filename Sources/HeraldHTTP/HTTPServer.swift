import Foundation
import HeraldIO
import HeraldSync

/// A small HTTP/1.1 server on POSIX sockets: one thread accepts, one thread per connection, at
/// most ``HTTPServerLimits/maxConnections`` of them (and at most
/// ``HTTPServerLimits/maxStreams`` of those streaming), each request answered by a
/// ``HTTPRequestHandler`` on its connection's thread.
///
/// Threads (not tasks) because every socket call here blocks: none of it ever runs on Swift's
/// cooperative pool. Each wait also watches a stop pipe, so `stop()` wakes every thread at once
/// instead of each polling a flag. Requests are read by RFC 9112 (see ``HTTPServerLimits`` for
/// the bounds); a request the grammar refuses is answered `400` (or `413`, `408`, `505`) as
/// `{"error": reason}` and its connection closed.
///
/// ```swift
/// let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { _ in .text(200, "hi") })
/// server.start()
/// await server.stop()
/// ```
public final class HTTPServer: Sendable {

    /// Injection points for tests.
    struct Seams: Sendable {
        /// Monotonic time for the head and idle deadlines.
        var uptime: @Sendable () -> Duration = HTTPServer.monotonicUptime
        /// The accept(2) call.
        var accept: TCPSocket.AcceptCall = TCPSocket.systemAccept
        /// Called with each wait after a failed accept instead of waiting (the server waits on
        /// its stop pipe when nil).
        var backoff: (@Sendable (Duration) -> Void)?

        init() {}
    }

    /// What the server is doing, as ``waitUntil(_:)`` conditions see it.
    public struct Snapshot: Sendable {
        /// Whether ``stop()`` was called.
        public var stopping: Bool
        /// Requests received so far.
        public var requests: Int
        /// The phase of each open connection.
        public var connections: [HTTPConnectionPhase]
        /// Body bytes held across connections.
        public var bufferedBodyBytes: Int
    }

    private struct Connection {
        var fd: Int32
        var phase: HTTPConnectionPhase
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

    /// The port it listens on (the chosen one when made with port 0).
    public let port: Int
    /// The address it listens on.
    public let host: String
    /// Its bounds.
    public let limits: HTTPServerLimits
    private let name: String
    private let listenFD: Int32
    private let wake: (read: Int32, write: Int32)
    private let handler: any HTTPRequestHandler
    private let seams: Seams
    private let state = SyncLock(State())
    private let running = DispatchGroup()

    private static let origin = ContinuousClock.now
    static let monotonicUptime: @Sendable () -> Duration = { ContinuousClock.now - origin }

    /// Binds `host:port` (an IPv4 address; port 0 = any free port) and listens; nothing is
    /// served before ``start()``.
    ///
    /// - Parameters:
    ///   - name: names its threads (`<name>-accept`, `<name>-connection`).
    /// - Throws: ``HTTPServerError`` when the address is not IPv4, or the socket cannot be
    ///   opened or bound (the port is taken).
    public convenience init(name: String = "http", host: String = "127.0.0.1", port: Int, limits: HTTPServerLimits = HTTPServerLimits(),
                            handler: some HTTPRequestHandler) throws(HTTPServerError) {
        try self.init(name: name, host: host, port: port, limits: limits, seams: Seams(), handler: handler)
    }

    init(name: String = "http", host: String = "127.0.0.1", port: Int, limits: HTTPServerLimits = HTTPServerLimits(), seams: Seams,
         handler: some HTTPRequestHandler) throws(HTTPServerError) {
        let listening: (socket: TCPSocket, port: Int)
        do throws(SystemError) {
            listening = try TCPSocket.listen(host: host, port: port)
        } catch {
            throw HTTPServerError(operation: error.operation.isEmpty ? error.description : error.operation, code: error.code)
        }
        let (fd, actualPort) = (listening.socket.descriptor, listening.port)
        do throws(SystemError) {
            let pipe = try WakePipe()
            wake = (pipe.readEnd, pipe.writeEnd)
        } catch {
            TCPSocket.close(fd)
            throw HTTPServerError(operation: "pipe", code: error.code)
        }
        self.listenFD = fd
        self.port = actualPort
        self.host = host
        self.name = name
        self.limits = limits
        self.seams = seams
        self.handler = handler
    }

    /// Starts the accepting thread. Calling it again, or after ``stop()``, does nothing.
    public func start() {
        let starting = state.withLock { state -> Bool in
            guard state.lifecycle == .created else { return false }
            state.lifecycle = .running
            return true
        }
        guard starting else { return }
        running.enter()
        NamedThread.start("\(name)-accept") { [self] in
            acceptLoop()
            running.leave()
        }
    }

    /// Stops accepting, closes every connection and waits for all threads to end. A second
    /// call waits for the same end.
    public func stop() async {
        let (first, wasRunning) = mutate { state -> (Bool, Bool) in
            guard state.lifecycle != .stopping else { return (false, false) }
            let wasRunning = state.lifecycle == .running
            state.lifecycle = .stopping
            // Under the lock: a connection leaves `connections` under it before its thread
            // closes the descriptor, so no number reused by another socket is shut down.
            // Shutdown (not close) also wakes a thread blocked writing to a client that does
            // not read.
            for connection in state.connections.values { TCPSocket(descriptor: connection.fd).shutdownBoth() }
            return (true, wasRunning)
        }
        if first {
            WakePipe.signal(wake.write)
            if !wasRunning { TCPSocket.close(listenFD) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { continuation.resume() }
        }
        if first {
            TCPSocket.close(wake.read)
            TCPSocket.close(wake.write)
        }
    }

    private var isStopping: Bool { state.withLock { $0.lifecycle == .stopping } }

    /// Requests received so far.
    public var requestsReceived: Int { state.withLock { $0.requests } }

    /// What it is doing now.
    public var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Returns once `count` requests have been received, the server stops, or the calling
    /// task is cancelled: tests await a request instead of sleeping.
    public func waitForRequests(_ count: Int) async {
        await waitUntil { $0.requests >= count }
    }

    /// Returns once `condition` holds, the server stops, or the calling task is cancelled.
    public func waitUntil(_ condition: @escaping @Sendable (Snapshot) -> Bool) async {
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
    private func mutate<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        let (result, waiters) = state.withLock { state -> (Result, [CheckedContinuation<Void, Never>]) in
            let result = body(&state)
            return (result, state.releasableWaiters())
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    // MARK: - Accepting

    private func acceptLoop() {
        defer { TCPSocket.close(listenFD) }
        var backoff = AcceptBackoff()
        while true {
            switch Poll.wait(readable: listenFD, wakers: [wake.read], milliseconds: -1) {
            case .woken: return
            case .timedOut: continue  // a signal interrupted the wait
            case .readable: break
            }
            switch TCPSocket(descriptor: listenFD).accept(call: seams.accept) {
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
            TCPSocket.close(fd)
            return false
        case .full:
            let response = HTTPServerResponse.error(503, "too many connections; retry later", headers: [("Retry-After", "1")])
            TCPSocket(descriptor: fd).refuse(with: ResponseWriter.bytes(of: response, close: true))
            return true
        case .admitted(let id):
            running.enter()
            NamedThread.start("\(name)-connection") { [self] in
                serve(id, fd)
                mutate { state in
                    _ = state.connections.removeValue(forKey: id)
                }
                // Closed only after it left `connections`: see stop().
                TCPSocket.close(fd)
                running.leave()
            }
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
            let request: HTTPServerRequest
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
            let response = handler.respond(to: request)
            if response.closesIdleConnections { closeIdleConnections() }
            guard pause(response.delay), response.delivery != .drop else {
                response.stream?.abandoned()
                return
            }
            if let stream = response.stream {
                let withoutBody = request.method == "HEAD"
                guard withoutBody || claimStream(id) else {
                    stream.abandoned()
                    reject(fd, HTTPRejection(503, "too many streams open (at most \(limits.maxStreams ?? 0) at once); retry later"))
                    return
                }
                serveStream(response, stream, on: id, fd, withoutBody: withoutBody)
                return
            }
            let close = request.wantsClose || response.closesConnection
            let written = ResponseWriter.write(
                response, to: fd, close: close, withoutBody: request.method == "HEAD", pause: pause)
            guard written, !close else { return }
        }
    }

    /// Marks the connection as streaming, unless ``HTTPServerLimits/maxStreams`` streams are
    /// open already (false). Counted and marked in one critical section, so two requests
    /// arriving together cannot both take the last place.
    private func claimStream(_ id: Int) -> Bool {
        mutate { state in
            if let most = limits.maxStreams, state.connections.values.count(where: { $0.phase == .streaming }) >= most { return false }
            state.connections[id]?.phase = .streaming
            return true
        }
    }

    /// Bytes read and dropped after a refusal at most (read in 64 KiB pieces, never held).
    static let maxDrainedBytes = 16 * 1024 * 1024

    /// Answers a refused request and closes gracefully: the rest of what the client sent is
    /// read (for a bounded time) after our FIN, so the close does not reset the connection and
    /// discard the answer before the client reads it.
    private func reject(_ fd: Int32, _ rejection: HTTPRejection) {
        let headers: [(name: String, value: String)] = rejection.status == 503 ? [("Retry-After", "1")] : []
        let response = HTTPServerResponse.error(rejection.status, rejection.reason, headers: headers)
        guard ResponseWriter.write(response, to: fd, close: true) else { return }
        TCPSocket(descriptor: fd).shutdownWriting()
        let deadline = ContinuousClock.now + .seconds(1)
        var drained = 0
        while drained < Self.maxDrainedBytes, case let left = deadline - ContinuousClock.now, left > .zero,
              Poll.wait(readable: fd, wakers: [wake.read], milliseconds: Poll.milliseconds(left)) == .readable,
              let bytes = TCPSocket(descriptor: fd).receiveChunk() {
            drained += bytes.count
        }
    }
}

extension HTTPServer {
    /// Closes every keep-alive connection that is waiting for its next request, so a client's
    /// next request opens a new one. A scripted drop needs that: libcurl (URLSession on Linux)
    /// silently resends a request whose reused connection closed without an answer, which would
    /// hide the drop and consume the next outcome, or hang a POST.
    public func closeIdleConnections() {
        state.withLock { state in
            // Under the lock, like stop(): see there.
            for connection in state.connections.values where connection.phase == .idle {
                TCPSocket(descriptor: connection.fd).shutdownBoth()
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
            if case .woken = Poll.wait(readable: -1, wakers: [wake.read], milliseconds: Poll.milliseconds(left)) { return false }
        }
    }
}

extension HTTPServer {
    /// Writes a streamed response's head, then runs its body on this (the connection's) thread
    /// until it returns, the client goes away or the server stops; the connection then closes.
    fileprivate func serveStream(_ response: HTTPServerResponse, _ stream: HTTPResponseStream, on id: Int, _ fd: Int32, withoutBody: Bool) {
        guard TCPSocket(descriptor: fd).sendAll(ResponseWriter.head(of: response, close: true)), !withoutBody else {
            stream.abandoned()
            return
        }
        mutate { $0.connections[id]?.phase = .streaming }
        let connection = HTTPStreamConnection(fd: fd, wake: wake.read)
        stream.body(connection)
        connection.end()
    }
}
