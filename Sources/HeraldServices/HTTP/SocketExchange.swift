import HeraldSync
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request of ``SocketHTTPTransport``: a connection driven by a dedicated thread that
/// sleeps in `poll(2)` on the socket and a wake-up pipe, so waiting costs no CPU and never
/// occupies the cooperative pool.
///
/// The calling task stops it with ``cancel()``, which writes to the pipe; the deadline is the
/// `poll` timeout. Every path out of ``run()`` closes the socket and the pipe.
final class SocketExchange: Sendable {
    private enum Phase { case running, cancelled, finished }

    private let phase = SyncLock(Phase.running)
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let request: HTTP1RequestEncoder
    private let timeout: Duration

    /// Opens the wake-up pipe.
    /// - Throws: ``ServiceError/transport(_:)`` when the process is out of descriptors.
    init(request: HTTP1RequestEncoder, timeout: Duration) throws(ServiceError) {
        var pipeEnds: [Int32] = [-1, -1]
        guard PosixSocket.makeWakePipe(&pipeEnds) else {
            throw .transport("cannot open a pipe for the request: \(PosixSocket.describe(errno))")
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        self.request = request
        self.timeout = timeout
    }

    /// Stops the exchange (it then reports `.cancelled`) unless it already finished.
    func cancel() {
        phase.withLock { phase in
            guard phase == .running else { return }
            phase = .cancelled
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    private var isCancelled: Bool { phase.withLock { $0 == .cancelled } }

    /// Performs the exchange on the calling thread, which it blocks (in `poll`) until the
    /// response is complete, the deadline passes or ``cancel()`` is called.
    func run() -> Result<HTTPResponse, ServiceError> {
        let deadline = ContinuousClock.now + timeout
        var socket: Int32 = -1
        let result: Result<HTTPResponse, ServiceError>
        do throws(ServiceError) {
            socket = try connect(before: deadline)
            try send(on: socket, before: deadline)
            result = .success(try receive(on: socket, before: deadline))
        } catch {
            result = .failure(error)
        }
        if socket >= 0 { PosixSocket.close(socket) }
        phase.withLock { phase in
            phase = .finished
            PosixSocket.close(wakeRead)
            PosixSocket.close(wakeWrite)
        }
        return result
    }

    /// Resolves the host and connects to the first address that accepts.
    private func connect(before deadline: ContinuousClock.Instant) throws(ServiceError) -> Int32 {
        if isCancelled { throw .cancelled }
        let addresses = try PosixSocket.resolve(host: request.host, port: request.port)
        var lastFailure = "no address"
        for address in addresses {
            let socket = try PosixSocket.open(family: address.family)
            switch PosixSocket.startConnect(socket, address) {
            case .connected:
                return socket
            case .inProgress:
                do throws(ServiceError) {
                    try wait(for: socket, events: Int16(POLLOUT), before: deadline)
                } catch {
                    PosixSocket.close(socket)
                    throw error
                }
                let code = PosixSocket.pendingError(socket)
                if code == 0 { return socket }
                lastFailure = PosixSocket.describe(code)
            case .failed(let code):
                lastFailure = PosixSocket.describe(code)
            }
            PosixSocket.close(socket)
        }
        throw .transport("cannot connect to \(request.host) port \(request.port): \(lastFailure)")
    }

    /// Writes the whole request. Stops early, without error, if the server already answers
    /// (a refusal of a large body, say): the answer is what the caller needs.
    private func send(on socket: Int32, before deadline: ContinuousClock.Instant) throws(ServiceError) {
        var offset = 0
        while offset < request.bytes.count {
            let written = request.bytes.withUnsafeBytes { buffer in
                PosixSocket.send(socket, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else {
                // A server that answers and closes before reading everything resets the rest.
                if code == EPIPE || code == ECONNRESET { return }
                throw .transport("sending the request to \(request.host) port \(request.port) failed: \(PosixSocket.describe(code))")
            }
            let ready = try wait(for: socket, events: Int16(POLLOUT) | Int16(POLLIN), before: deadline)
            if ready & Int16(POLLIN) != 0 && ready & Int16(POLLOUT) == 0 { return }
        }
    }

    /// Reads until the response is complete.
    private func receive(on socket: Int32, before deadline: ContinuousClock.Instant) throws(ServiceError) -> HTTPResponse {
        var reader = HTTP1ResponseReader(isHeadRequest: request.isHeadRequest, bodyLimit: request.maxResponseBytes)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { PosixSocket.receive(socket, $0.baseAddress!, $0.count) }
            do throws(HTTP1ResponseError) {
                if count > 0 {
                    chunk.withUnsafeBytes { reader.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    if let response = try reader.next() { return response }
                    continue
                }
                if count == 0 { return try reader.finish() }
            } catch where error.isTooLarge {
                throw ServiceError(kind: .decoding, message: error.reason, location: "body")
            } catch {
                throw .transport("\(error.reason) (\(request.host) port \(request.port))")
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                try wait(for: socket, events: Int16(POLLIN), before: deadline)
                continue
            }
            if code == ECONNRESET && reader.isEmpty {
                throw .transport("the server closed the connection without answering (\(request.host) port \(request.port): \(PosixSocket.describe(code)))")
            }
            throw .transport("reading the response from \(request.host) port \(request.port) failed: \(PosixSocket.describe(code))")
        }
    }

    /// Sleeps in `poll` until `socket` reports one of `events` (or an error or hang-up, which
    /// the next call on it reports), and returns what it reported.
    /// - Throws: `.cancelled` once ``cancel()`` was called; `.timeout` once `deadline` passed.
    @discardableResult
    private func wait(for socket: Int32, events: Int16, before deadline: ContinuousClock.Instant) throws(ServiceError) -> Int16 {
        while true {
            if isCancelled { throw .cancelled }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout(after: timeout) }
            // Rounded up, so the wait never ends a little early and goes round again.
            let milliseconds = Int32(clamping: remaining.millisecondsRoundedUp)
            var descriptors = [
                pollfd(fd: socket, events: events, revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, milliseconds)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .transport("waiting on the connection failed: \(PosixSocket.describe(code))")
            }
            if descriptors[1].revents != 0 { continue }
            if descriptors[0].revents != 0 { return descriptors[0].revents }
        }
    }
}
