import Foundation
import HeraldIO

/// Reads HTTP/1.1 requests (RFC 9112) one after another from a keep-alive connection: the head
/// within ``HTTPServerLimits/headTimeout`` of its first byte, then a `Content-Length` or chunked
/// body whose bytes are reserved from the server's body budget before they are read. Answers
/// `Expect: 100-continue` (libcurl sends it) only once the body is allowed.
struct HTTPRequestReader {
    enum Outcome {
        case request(HTTPServerRequest)
        /// The peer closed, the server is stopping, or the connection stayed idle too long.
        case closed
        case rejected(HTTPRejection)
    }

    typealias Phase = HTTPConnectionPhase

    /// What the reader needs from its server.
    struct Environment {
        var fd: Int32
        /// The read end of the server's stop pipe.
        var wake: Int32
        var limits: HTTPServerLimits
        /// Monotonic time the deadlines follow.
        var uptime: () -> Duration
        var phaseChanged: (Phase) -> Void
        /// Takes bytes from the server-wide body budget; false when they are not available.
        var reserve: (Int) -> Bool
        var release: (Int) -> Void
    }

    private let environment: Environment
    private var parser: HTTPRequestParser
    /// Budget bytes held for the current request's body.
    private var reserved = 0

    init(_ environment: Environment) {
        self.environment = environment
        self.parser = HTTPRequestParser(limits: environment.limits)
    }

    /// Gives the current request's body bytes back to the budget (the handler is done with it).
    mutating func releaseBody() {
        guard reserved > 0 else { return }
        environment.release(reserved)
        reserved = 0
    }

    /// The next request: the parser decides what the bytes mean, this reader waits for them
    /// (the idle deadline until a head's first byte, then the head deadline from that byte,
    /// never renewed; the idle deadline for each wait in a body), reserves the body's bytes from
    /// the budget before they are read, and answers `Expect: 100-continue`.
    mutating func next() -> Outcome {
        releaseBody()
        let limits = environment.limits
        var headDeadline: Duration?
        if parser.hasStartedHead {
            headDeadline = environment.uptime() + limits.headTimeout
            environment.phaseChanged(.head)
        } else {
            environment.phaseChanged(.idle)
        }
        let idleUntil = environment.uptime() + limits.idleTimeout
        var request: HTTPServerRequest?
        while true {
            switch parser.next() {
            case .rejected(let rejection):
                return .rejected(rejection)
            case .head(let head):
                request = HTTPServerRequest(method: head.method, rawPath: head.path, rawQuery: head.query, headers: head.headers,
                                            body: Data(), version: head.version)
                if case .none = head.framing { continue }
                if case .length(let length) = head.framing, !reserve(length) { return .rejected(Self.busy) }
                environment.phaseChanged(.body)
                if head.version != "HTTP/1.0", request?.header("Expect")?.lowercased() == "100-continue" {
                    guard ResponseWriter.writeContinue(to: environment.fd) else { return .closed }
                }
            case .chunk(let size):
                guard reserve(size) else { return .rejected(Self.busy) }
            case .body(let body):
                guard var complete = request else { return .closed }
                complete.body = body
                return .request(complete)
            case .needMore:
                let inHead = parser.isInHead
                let deadline = inHead ? (headDeadline ?? idleUntil) : environment.uptime() + limits.idleTimeout
                switch receive(until: deadline) {
                case .bytes:
                    if inHead, headDeadline == nil, parser.hasStartedHead {
                        headDeadline = environment.uptime() + limits.headTimeout
                        environment.phaseChanged(.head)
                    }
                case .closed:
                    return .closed
                case .timedOut:
                    return inHead && headDeadline != nil ? .rejected(HTTPRejection(408, "the request head took too long")) : .closed
                }
            }
        }
    }

    static let busy = HTTPRejection(503, "the server holds too many request bodies; retry later")

    private mutating func reserve(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        guard environment.reserve(count) else { return false }
        reserved += count
        return true
    }

    // MARK: - Socket

    private enum Received {
        case bytes
        case closed
        case timedOut
    }

    /// Waits for bytes until `deadline` (of ``Environment/uptime``) and feeds them to the
    /// parser; `.closed` on end of stream, error or stop.
    private mutating func receive(until deadline: Duration) -> Received {
        while true {
            let left = deadline - environment.uptime()
            guard left > .zero else { return .timedOut }
            switch Poll.wait(readable: environment.fd, wakers: [environment.wake], milliseconds: Poll.milliseconds(left)) {
            case .woken:
                return .closed
            case .timedOut:
                continue
            case .readable:
                guard let bytes = TCPSocket(descriptor: environment.fd).receiveChunk() else { return .closed }
                parser.feed(bytes)
                return .bytes
            }
        }
    }
}
