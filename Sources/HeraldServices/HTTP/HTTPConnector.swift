import Foundation
import HeraldIO
import HeraldSync

/// Opens the connections of ``SocketHTTPTransport`` (TCP, then TLS for `https`) and keeps the
/// idle ones a kept-alive response left usable, a few per origin, for the next request there.
///
/// `Sendable`: the idle connections are behind a lock, and one is owned by exactly one exchange
/// from ``reusable(for:)`` (or ``connect(for:before:timeout:wake:stop:)``) until ``giveBack(_:)``.
final class HTTPConnector: Sendable {
    /// The most idle connections kept per origin.
    static let maxIdlePerOrigin = 4

    private let idle = SyncLock<[String: [HTTPConnection]]>([:])

    init() {}

    /// Connects to the request's host and port before `deadline`; when the wake pipe fires,
    /// `stop` says whether to give up.
    /// - Throws: `.transport` naming the host (does not resolve, refused), `.timeout`, `.cancelled`.
    func connect(for request: HTTP1RequestEncoder, before deadline: ContinuousClock.Instant, timeout: Duration, wake: Int32,
                 stop: () -> Bool) throws(ServiceError) -> HTTPConnection {
        let socket: TCPSocket
        do throws(TCPSocket.ConnectError) {
            socket = try TCPSocket.connect(host: request.host, port: request.port, before: deadline, wake: wake, stop: stop)
        } catch {
            switch error {
            case .unresolved(let reason): throw .transport("cannot resolve the host \(request.host): \(reason)")
            case .failed(let failure): throw .transport("cannot connect to \(request.host) port \(request.port): \(failure)")
            case .timedOut: throw .timeout(after: timeout)
            case .stopped: throw .cancelled
            }
        }
        return HTTPConnection(stream: socket, origin: request.origin)
    }

    /// An idle connection to the request's origin, if one is kept and the server has not closed
    /// it (a kept connection that is readable was closed, or sent what no request asked for).
    func reusable(for request: HTTP1RequestEncoder) -> HTTPConnection? {
        guard request.keepAlive else { return nil }
        while let candidate = idle.withLock({ $0[request.origin]?.popLast() }) {
            if case .success(let events) = Poll.wait([(candidate.stream.descriptor, Poll.input)], milliseconds: 0), events[0] == 0 {
                return candidate
            }
            var closing = candidate
            closing.stream.close()
        }
        return nil
    }

    /// Keeps `connection` for the next request to its origin (or closes it when enough are kept).
    func giveBack(_ connection: HTTPConnection) {
        let surplus = idle.withLock { idle -> HTTPConnection? in
            guard idle[connection.origin, default: []].count < Self.maxIdlePerOrigin else { return connection }
            idle[connection.origin, default: []].append(connection)
            return nil
        }
        if var surplus { surplus.stream.close() }
    }

    deinit {
        for var connection in idle.withLock({ $0.values.flatMap { $0 } }) { connection.stream.close() }
    }
}
