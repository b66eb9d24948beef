import Foundation

/// A small HTTP/1.1 server on POSIX sockets: one thread accepts, one thread per connection.
///
/// Threads (not tasks) because every socket call here blocks; each loop polls with a short
/// timeout so `stop()` is noticed promptly.
final class HTTPServer: Sendable {
    typealias Handler = @Sendable (SandboxRequest) -> SandboxResponse

    private struct State: Sendable {
        var stopping = false
        var connections: Set<Int32> = []
        /// Connections waiting for a new request with nothing received yet.
        var idle: Set<Int32> = []
        var requests = 0
        /// Tasks waiting for `requests` to reach a count, by waiter id.
        var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter = 0

        /// Removes and returns the waiters that may go on: their count is reached, or the
        /// server is stopping (no more requests will come).
        mutating func releasableWaiters() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { stopping || $0.value.count <= requests }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    let port: Int
    private let listenFD: Int32
    private let handler: Handler
    private let state = Locked(State())
    private let running = DispatchGroup()

    init(port: Int, handler: @escaping Handler) throws(SandboxError) {
        let (fd, actualPort) = try Socket.listen(port: port)
        self.listenFD = fd
        self.port = actualPort
        self.handler = handler
    }

    func start() {
        running.enter()
        let thread = Thread { [self] in
            acceptLoop()
            running.leave()
        }
        thread.name = "sandbox-accept"
        thread.start()
    }

    /// Stops accepting, closes every connection and waits for all threads to end.
    func stop() async {
        let (connections, waiters) = state.withLock { state -> (Set<Int32>, [CheckedContinuation<Void, Never>]) in
            state.stopping = true
            return (state.connections, state.releasableWaiters())
        }
        for waiter in waiters { waiter.resume() }
        // Shutdown (not close) wakes blocked calls without freeing the descriptor numbers,
        // which the owning threads close themselves.
        for fd in connections { Socket.shutdownBoth(fd) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { continuation.resume() }
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    var requestsReceived: Int { state.withLock { $0.requests } }

    /// Returns once `count` requests have been received, the server stops, or the calling
    /// task is cancelled: tests await a request instead of sleeping.
    func waitForRequests(_ count: Int) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.stopping || state.requests >= count || Task.isCancelled { return true }
                    state.waiters[id] = (count, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private func acceptLoop() {
        defer { Socket.close(listenFD) }
        while !isStopping {
            guard Socket.waitReadable(listenFD, milliseconds: 50), let client = Socket.accept(listenFD) else { continue }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.connections.insert(client)
                return true
            }
            guard admitted else {
                Socket.close(client)
                break
            }
            running.enter()
            let thread = Thread { [self] in
                serve(client)
                // Removed from `idle` under the lock before the descriptor is closed, so
                // closeIdleConnections() never shuts down a number reused by another socket.
                state.withLock { state in
                    state.connections.remove(client)
                    state.idle.remove(client)
                }
                Socket.close(client)
                running.leave()
            }
            thread.name = "sandbox-connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var reader = HTTPRequestReader(fd: fd, isStopping: { [self] in isStopping }, markIdle: { [self] idle in
            state.withLock { state in
                if idle { state.idle.insert(fd) } else { state.idle.remove(fd) }
            }
        })
        while !isStopping {
            let request: SandboxRequest
            switch reader.next() {
            case .request(let received): request = received
            case .closed: return
            case .malformed(let status, let reason):
                let response = SandboxResponse.json(status, .object([("error", .string(reason))]))
                _ = ResponseWriter.write(response, to: fd, close: true)
                return
            }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.requests += 1
                return state.releasableWaiters()
            }
            for waiter in waiters { waiter.resume() }
            let response = handler(request)
            if response.closesIdleConnections { closeIdleConnections() }
            guard pause(response.delay), response.delivery != .drop else { return }
            let close = request.wantsClose || response.closesConnection
            guard ResponseWriter.write(response, to: fd, close: close, pause: pause), !close else { return }
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
            for fd in state.idle { Socket.shutdownBoth(fd) }
            state.idle.removeAll()
        }
    }

    /// Sleeps for `duration` in short slices; false as soon as the server is stopping, so an
    /// injected latency never delays `stop()`.
    func pause(_ duration: Duration) -> Bool {
        var left = duration.seconds
        while left > 0 {
            if isStopping { return false }
            let slice = min(left, 0.02)
            Thread.sleep(forTimeInterval: slice)
            left -= slice
        }
        return !isStopping
    }
}

extension Duration {
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
