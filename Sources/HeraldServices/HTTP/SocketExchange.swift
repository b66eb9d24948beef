import Foundation
import HeraldIO
import HeraldSync

/// One request of ``SocketHTTPTransport``: a connection driven by a dedicated thread that
/// sleeps in `poll(2)` on the socket and a wake-up pipe, so waiting costs no CPU and never
/// occupies the cooperative pool.
///
/// The calling task stops it with ``cancel()``, which writes to the pipe; the deadline is the
/// `poll` timeout. Every path out of ``run()`` closes the pipe, and the connection unless it
/// is handed back for reuse.
final class SocketExchange: Sendable {
    private enum Phase { case running, cancelled, finished }

    private let phase = SyncLock(Phase.running)
    private let wake: WakePipe
    private let request: HTTP1RequestEncoder
    private let timeout: Duration
    private let connector: HTTPConnector

    /// Opens the wake-up pipe.
    /// - Throws: ``ServiceError/transport(_:)`` when the process is out of descriptors.
    init(request: HTTP1RequestEncoder, timeout: Duration, connector: HTTPConnector) throws(ServiceError) {
        do throws(SystemError) {
            wake = try WakePipe()
        } catch {
            throw .transport("cannot open a pipe for the request: \(error)")
        }
        self.request = request
        self.timeout = timeout
        self.connector = connector
    }

    /// Stops the exchange (it then reports `.cancelled`) unless it already finished.
    func cancel() {
        phase.withLock { phase in
            guard phase == .running else { return }
            phase = .cancelled
            wake.signal()
        }
    }

    private var isCancelled: Bool { phase.withLock { $0 == .cancelled } }

    /// Performs the exchange on the calling thread, which it blocks (in `poll`) until the
    /// response is complete, the deadline passes or ``cancel()`` is called. A kept-alive
    /// connection the server closed meanwhile is replaced by a new one, once.
    func run() -> Result<HTTPResponse, ServiceError> {
        let deadline = ContinuousClock.now + timeout
        let reused = isCancelled ? nil : connector.reusable(for: request)
        var outcome = exchange(on: reused, before: deadline)
        if case .failure(.staleConnection) = outcome, reused != nil {
            outcome = exchange(on: nil, before: deadline)
        }
        phase.withLock { phase in
            phase = .finished
            wake.close()
        }
        return outcome.mapError(\.serviceError)
    }

    private func exchange(on reused: HTTPConnection?, before deadline: ContinuousClock.Instant) -> Result<HTTPResponse, ExchangeError> {
        var connection: HTTPConnection
        do throws(ServiceError) {
            if isCancelled { throw .cancelled }
            if let reused {
                connection = reused
            } else {
                connection = try connector.connect(for: request, before: deadline, timeout: timeout, wake: wake.readEnd) { isCancelled }
            }
        } catch {
            return .failure(.service(error))
        }
        do throws(ExchangeError) {
            try send(on: &connection.stream, before: deadline)
            let (response, reusable) = try receive(on: &connection.stream, before: deadline, fresh: reused == nil)
            if reusable && request.keepAlive { connector.giveBack(connection) } else { connection.stream.close() }
            return .success(response)
        } catch {
            connection.stream.close()
            return .failure(error)
        }
    }

    /// Writes the whole request. Stops early, without error, if the server already answers
    /// (a refusal of a large body, say): the answer is what the caller needs.
    private func send(on stream: inout any ByteStream, before deadline: ContinuousClock.Instant) throws(ExchangeError) {
        var offset = 0
        while offset < request.bytes.count {
            let result = request.bytes.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch result {
            case .bytes(let count):
                offset += count
            case .wantWrite:
                let ready = try wait(for: stream.descriptor, events: Poll.output | Poll.input, before: deadline)
                if ready & Poll.input != 0 && ready & Poll.output == 0 { return }
            case .wantRead:
                try wait(for: stream.descriptor, events: Poll.input, before: deadline)
            case .closed:
                return
            case .failed(let error):
                // A server that answers and closes before reading everything resets the rest.
                if error.code == EPIPE || error.code == ECONNRESET { return }
                throw .service(.transport("sending the request to \(request.host) port \(request.port) failed: \(error)"))
            }
        }
    }

    /// Reads until the response is complete; says whether the connection may carry another.
    /// On a reused connection (`fresh` false), a close or reset before the first byte is
    /// ``ExchangeError/staleConnection``.
    private func receive(on stream: inout any ByteStream, before deadline: ContinuousClock.Instant,
                         fresh: Bool) throws(ExchangeError) -> (HTTPResponse, Bool) {
        var reader = HTTP1ResponseReader(isHeadRequest: request.isHeadRequest, bodyLimit: request.maxResponseBytes)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let result = chunk.withUnsafeMutableBytes { stream.read(into: $0) }
            switch result {
            case .bytes(let count):
                chunk.withUnsafeBytes { reader.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                if let response = try parse({ () throws(HTTP1ResponseError) in try reader.next() }) { return (response, reader.isReusable) }
                continue
            case .closed:
                if !fresh && reader.isEmpty { throw .staleConnection }
                return (try parse { () throws(HTTP1ResponseError) in try reader.finish() }, false)
            case .wantRead, .wantWrite:
                try wait(for: stream.descriptor, events: result == .wantWrite ? Poll.output : Poll.input, before: deadline)
            case .failed(let error):
                if !fresh && reader.isEmpty && error.code == ECONNRESET { throw .staleConnection }
                if error.code == ECONNRESET && reader.isEmpty {
                    throw .service(.transport("the server closed the connection without answering (\(request.host) port \(request.port): \(error))"))
                }
                throw .service(.transport("reading the response from \(request.host) port \(request.port) failed: \(error)"))
            }
        }
    }

    private func parse<T>(_ body: () throws(HTTP1ResponseError) -> T) throws(ExchangeError) -> T {
        do throws(HTTP1ResponseError) {
            return try body()
        } catch where error.isTooLarge {
            throw .service(ServiceError(kind: .decoding, message: error.reason, location: "body"))
        } catch {
            throw .service(.transport("\(error.reason) (\(request.host) port \(request.port))"))
        }
    }

    /// Sleeps in `poll` until `descriptor` reports one of `events` (or an error or hang-up,
    /// which the next call on it reports), and returns what it reported.
    /// - Throws: `.cancelled` once ``cancel()`` was called; `.timeout` once `deadline` passed.
    @discardableResult
    private func wait(for descriptor: Int32, events: Int16, before deadline: ContinuousClock.Instant) throws(ExchangeError) -> Int16 {
        if isCancelled { throw .service(.cancelled) }
        switch Poll.wait(descriptor, for: events, wake: wake.readEnd, deadline: deadline, stop: { isCancelled }) {
        case .ready(let events): return events
        case .timedOut: throw .service(.timeout(after: timeout))
        case .stopped: throw .service(.cancelled)
        case .failed(let error): throw .service(.transport("waiting on the connection failed: \(error)"))
        }
    }
}

/// How an exchange ends early: a service error, or a kept-alive connection found closed
/// (retried once on a fresh connection).
enum ExchangeError: Error {
    case service(ServiceError)
    case staleConnection

    var serviceError: ServiceError {
        switch self {
        case .service(let error): error
        case .staleConnection: .transport("the server closed the kept-alive connection without answering")
        }
    }
}
