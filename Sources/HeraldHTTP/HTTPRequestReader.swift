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

    /// The longest chunk-size line (size and extensions) read.
    static let maxChunkLineBytes = 4096

    private let environment: Environment
    private var buffer: [UInt8] = []
    /// Budget bytes held for the current request's body.
    private var reserved = 0

    init(_ environment: Environment) {
        self.environment = environment
    }

    /// Gives the current request's body bytes back to the budget (the handler is done with it).
    mutating func releaseBody() {
        guard reserved > 0 else { return }
        environment.release(reserved)
        reserved = 0
    }

    mutating func next() -> Outcome {
        releaseBody()
        let head: HTTPHead
        switch readHead() {
        case .success(let parsed): head = parsed
        case .failure(let failure): return failure.outcome
        }
        var request = HTTPServerRequest(method: head.method, rawPath: head.path, rawQuery: head.query, headers: head.headers,
                                        body: Data(), version: head.version)
        let limits = environment.limits
        switch head.framing {
        case .none:
            return .request(request)
        case .length(let length):
            guard length <= limits.maxBodyBytes else { return .rejected(HTTPRejection(413, "body too large")) }
            guard reserve(length) else { return .rejected(Self.busy) }
        case .chunked:
            break
        }
        environment.phaseChanged(.body)
        if request.version != "HTTP/1.0", request.header("Expect")?.lowercased() == "100-continue" {
            guard ResponseWriter.writeContinue(to: environment.fd) else { return .closed }
        }
        switch head.framing {
        case .length(let length):
            if let failure = fill(atLeast: length) { return failure.outcome }
            request.body = Data(buffer[0..<length])
            buffer.removeFirst(length)
        case .chunked:
            switch readChunkedBody() {
            case .success(let body): request.body = body
            case .failure(let failure): return failure.outcome
            }
        case .none:
            break
        }
        return .request(request)
    }

    static let busy = HTTPRejection(503, "the server holds too many request bodies; retry later")

    struct Failure: Error {
        var outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
        static let closed = Failure(.closed)
        static func rejected(_ rejection: HTTPRejection) -> Failure { Failure(.rejected(rejection)) }
    }

    private mutating func reserve(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        guard environment.reserve(count) else { return false }
        reserved += count
        return true
    }

    // MARK: - Head

    /// Waits for a whole head: the idle deadline runs until the first byte, then the head
    /// deadline from that byte (never renewed).
    private mutating func readHead() -> Result<HTTPHead, Failure> {
        let limits = environment.limits
        var deadline: Duration
        var started = !buffer.isEmpty
        if started {
            deadline = environment.uptime() + limits.headTimeout
            environment.phaseChanged(.head)
        } else {
            deadline = environment.uptime() + limits.idleTimeout
            environment.phaseChanged(.idle)
        }
        var scanned = 0
        while true {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            while buffer.first == HTTPHead.lineFeed || (buffer.count >= 2 && buffer[0] == HTTPHead.carriageReturn && buffer[1] == HTTPHead.lineFeed) {
                buffer.removeFirst(buffer[0] == HTTPHead.lineFeed ? 1 : 2)
                scanned = 0
            }
            if let end = headEnd(scanned: &scanned) {
                guard end.length <= limits.maxHeadBytes else { return .failure(.rejected(HTTPRejection(413, "head too large"))) }
                let parsed = HTTPHead.parse(buffer[0..<end.length])
                buffer.removeFirst(end.consumed)
                return parsed.mapError { .rejected($0) }
            }
            guard buffer.count <= limits.maxHeadBytes else { return .failure(.rejected(HTTPRejection(413, "head too large"))) }
            switch receive(until: deadline) {
            case .bytes:
                if !started {
                    started = true
                    deadline = environment.uptime() + limits.headTimeout
                    environment.phaseChanged(.head)
                }
            case .closed:
                return .failure(.closed)
            case .timedOut:
                return .failure(started ? .rejected(HTTPRejection(408, "the request head took too long")) : .closed)
            }
        }
    }

    /// Finds the empty line that ends the head: the head's length (through its last line's
    /// LF) and the bytes to consume (through the empty line). `scanned` keeps the search
    /// from starting over on every read.
    private func headEnd(scanned: inout Int) -> (length: Int, consumed: Int)? {
        var index = scanned
        while index < buffer.count {
            if buffer[index] == HTTPHead.lineFeed {
                guard index + 1 < buffer.count else { break }
                if buffer[index + 1] == HTTPHead.lineFeed { return (index + 1, index + 2) }
                if buffer[index + 1] == HTTPHead.carriageReturn {
                    guard index + 2 < buffer.count else { break }
                    if buffer[index + 2] == HTTPHead.lineFeed { return (index + 1, index + 3) }
                }
            }
            index += 1
        }
        scanned = index
        return nil
    }

    // MARK: - Body

    private mutating func readChunkedBody() -> Result<Data, Failure> {
        let limits = environment.limits
        var body = Data()
        while true {
            let line: ArraySlice<UInt8>
            switch readLine(limit: Self.maxChunkLineBytes) {
            case .success(let read): line = read
            case .failure(let failure): return .failure(failure)
            }
            guard let size = Self.chunkSize(line) else { return .failure(.rejected(.badRequest("bad chunk size line"))) }
            if size == 0 { return readTrailers().map { body } }
            // Compared by subtraction: a hostile size near Int.max must not overflow.
            guard size <= limits.maxBodyBytes - body.count else { return .failure(.rejected(HTTPRejection(413, "body too large"))) }
            guard reserve(size) else { return .failure(.rejected(Self.busy)) }
            // The chunk's data must end with CRLF (or a bare LF, as lines may).
            if let failure = fill(atLeast: size + 1) { return .failure(failure) }
            var terminator = 0
            if buffer[size] == HTTPHead.lineFeed {
                terminator = 1
            } else if buffer[size] == HTTPHead.carriageReturn {
                if let failure = fill(atLeast: size + 2) { return .failure(failure) }
                if buffer[size + 1] == HTTPHead.lineFeed { terminator = 2 }
            }
            guard terminator > 0 else { return .failure(.rejected(.badRequest("chunk data not followed by CRLF"))) }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + terminator)
        }
    }

    /// `chunk-size [ chunk-ext ]`: 1*HEXDIG, then optional whitespace and `;` extensions.
    static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
        let digits = line.prefix { isHexDigit($0) }
        guard !digits.isEmpty else { return nil }
        var rest = line.dropFirst(digits.count)
        while let first = rest.first, HTTPHead.isWhitespace(first) { rest.removeFirst() }
        guard rest.isEmpty || rest.first == UInt8(ascii: ";") else { return nil }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        // More than 15 hex digits is beyond any body limit: Int.max, so the caller answers 413.
        guard significant.count <= 15 else { return Int.max }
        return Int(String(decoding: significant.isEmpty ? [UInt8(ascii: "0")] : significant, as: UTF8.self), radix: 16)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        HTTPHead.isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// Trailer fields after the last chunk, up to the empty line; read and dropped.
    private mutating func readTrailers() -> Result<Void, Failure> {
        var total = 0
        while true {
            switch readLine(limit: environment.limits.maxHeadBytes - total) {
            case .success(let line):
                if line.isEmpty { return .success(()) }
                total += line.count + 2
            case .failure(let failure):
                return .failure(failure)
            }
        }
    }

    /// One line (without its CRLF or LF), consumed from the buffer; refused when it runs over
    /// `limit` bytes.
    private mutating func readLine(limit: Int) -> Result<ArraySlice<UInt8>, Failure> {
        var scanned = 0
        while true {
            if let end = buffer[scanned...].firstIndex(of: HTTPHead.lineFeed) {
                guard end <= limit else { break }
                var line = buffer[0..<end]
                if line.last == HTTPHead.carriageReturn { line = line.dropLast() }
                let copy = ArraySlice(Array(line))
                buffer.removeFirst(end + 1)
                return .success(copy)
            }
            scanned = buffer.count
            guard buffer.count <= limit else { break }
            switch receive(until: environment.uptime() + environment.limits.idleTimeout) {
            case .bytes: continue
            case .closed, .timedOut: return .failure(.closed)
            }
        }
        return .failure(.rejected(.badRequest("line too long in a chunked body")))
    }

    /// Reads until the buffer holds `count` bytes; nil when it does.
    private mutating func fill(atLeast count: Int) -> Failure? {
        while buffer.count < count {
            switch receive(until: environment.uptime() + environment.limits.idleTimeout) {
            case .bytes: continue
            case .closed, .timedOut: return .closed
            }
        }
        return nil
    }

    // MARK: - Socket

    private enum Received {
        case bytes
        case closed
        case timedOut
    }

    /// Waits for bytes until `deadline` (of ``Environment/uptime``); `.closed` on end of
    /// stream, error or stop.
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
                buffer.append(contentsOf: bytes)
                return .bytes
            }
        }
    }
}
