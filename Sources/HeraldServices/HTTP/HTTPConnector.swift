import Foundation
import HeraldIO
import HeraldSync

/// Opens the connections of ``SocketHTTPTransport`` (TCP, then TLS for `https`) and keeps the
/// idle ones a kept-alive response left usable, a few per origin, for the next request there.
///
/// `Sendable`: the idle connections and the TLS contexts are behind locks, and a connection is
/// owned by exactly one exchange from ``reusable(for:)`` (or
/// ``connect(for:before:timeout:wake:stop:)``) until ``giveBack(_:)``.
final class HTTPConnector: Sendable {
    /// The most idle connections kept per origin.
    static let maxIdlePerOrigin = 4

    private let idle = SyncLock<[String: [HTTPConnection]]>([:])
    private let contexts = SyncLock<[TLSConfiguration: TLSContext]>([:])

    init() {}

    /// Connects to the request's host and port before `deadline`, with TLS for `https`; when
    /// the wake pipe fires, `stop` says whether to give up.
    /// - Throws: `.transport` naming the host (does not resolve, refused, a certificate refused),
    ///   `.timeout`, `.cancelled`.
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
        guard request.isSecure else { return HTTPConnection(stream: socket, origin: request.origin) }
        let stream: TLSStream
        do throws(SystemCryptoError) {
            stream = try TLSStream(socket: socket, context: context(for: request.tls), serverName: request.host)
        } catch {
            TCPSocket.close(socket.descriptor)
            throw .transport("TLS to \(request.host) port \(request.port) is not available: \(error)")
        }
        while true {
            let events: Int16
            switch stream.handshake() {
            case .bytes: return HTTPConnection(stream: stream, origin: request.origin)
            case .wantRead: events = Poll.input
            case .wantWrite: events = Poll.output
            case .closed:
                stream.close()
                throw .transport("the TLS handshake with \(request.host) port \(request.port) failed: the server closed the connection")
            case .failed(let error):
                stream.close()
                throw .transport("the TLS handshake with \(request.host) port \(request.port) failed: \(error)")
            }
            let outcome = Poll.wait(stream.descriptor, for: events, wake: wake, deadline: deadline, stop: stop)
            switch outcome {
            case .ready: continue
            case .timedOut: stream.close(); throw .timeout(after: timeout)
            case .stopped: stream.close(); throw .cancelled
            case .failed(let error): stream.close(); throw .transport("waiting on the connection failed: \(error)")
            }
        }
    }

    /// The context of `configuration`, made once (loading the CA store is not free).
    private func context(for configuration: TLSConfiguration) throws(SystemCryptoError) -> TLSContext {
        if let known = contexts.withLock({ $0[configuration] }) { return known }
        let made = try TLSContext(configuration)
        return contexts.withLock { contexts in
            if let raced = contexts[configuration] { return raced }
            contexts[configuration] = made
            return made
        }
    }

    /// An idle connection to the request's origin, if one is kept and the server has not closed
    /// it, for an idempotent request (a `POST` always gets a fresh connection: see
    /// ``HTTP1RequestEncoder/isIdempotent``). A kept connection that is readable is read: TLS
    /// records that carry no data (a session ticket) leave it usable; an end, a failure, or bytes
    /// no request asked for close it.
    func reusable(for request: HTTP1RequestEncoder) -> HTTPConnection? {
        guard request.keepAlive, request.isIdempotent else { return nil }
        while var candidate = idle.withLock({ $0[request.origin]?.popLast() }) {
            guard case .success(let events) = Poll.wait([(candidate.stream.descriptor, Poll.input)], milliseconds: 0) else {
                candidate.stream.close()
                continue
            }
            if events[0] == 0 { return candidate }
            var probe = [UInt8](repeating: 0, count: 1)
            if probe.withUnsafeMutableBytes({ candidate.stream.read(into: $0) }) == .wantRead { return candidate }
            candidate.stream.close()
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

    /// Connections kept idle now (tests count them to see reuse).
    var idleConnections: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    deinit {
        for var connection in idle.withLock({ $0.values.flatMap { $0 } }) { connection.stream.close() }
    }
}
