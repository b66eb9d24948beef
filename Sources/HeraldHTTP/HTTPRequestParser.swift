import Foundation

/// HTTP/1.1 requests (RFC 9112) parsed from bytes fed in arbitrary splits: a state machine that
/// owns no socket and no clock, like the NATS client's protocol parser and the HTTP client's
/// response reader. ``HTTPRequestReader`` feeds it what the socket gives and acts on what it
/// answers (deadlines, the body budget, `100 Continue`).
///
/// For each request ``next()`` answers ``Event/head(_:)``, then for a chunked body one
/// ``Event/chunk(_:)`` per chunk (before its data, so the caller can reserve its bytes), then
/// ``Event/body(_:)`` (empty without a body); ``Event/needMore`` whenever the bytes fed so far
/// end in the middle. After ``Event/rejected(_:)`` the connection is done: every later call
/// answers the same rejection.
struct HTTPRequestParser {
    /// What the bytes fed so far amount to.
    enum Event {
        /// The bytes end in the middle of something: feed more.
        case needMore
        /// A request head; its body (if any) follows.
        case head(HTTPHead)
        /// A chunk of this many bytes is announced; its data is next.
        case chunk(Int)
        /// The request's whole body (empty when it has none): the request is complete.
        case body(Data)
        /// The bytes break RFC 9112 or a limit: answer this and close.
        case rejected(HTTPRejection)
    }

    private enum State {
        /// Before or in a head; `scanned` bytes of the buffer hold no head end.
        case head(scanned: Int)
        /// The head of a request without a body was answered; its (empty) body is next.
        case noBody
        case length(Int)
        /// The next line is a chunk-size line.
        case chunkLine(body: Data)
        case chunkData(size: Int, body: Data)
        /// Trailer fields (`total` bytes so far) up to the empty line.
        case trailers(total: Int, body: Data)
        case failed(HTTPRejection)
    }

    /// The longest chunk-size line (size and extensions) read.
    static let maxChunkLineBytes = 4096

    let maxHeadBytes: Int
    let maxBodyBytes: Int
    private var buffer: [UInt8] = []
    private var state = State.head(scanned: 0)

    init(maxHeadBytes: Int, maxBodyBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    init(limits: HTTPServerLimits) {
        self.init(maxHeadBytes: limits.maxHeadBytes, maxBodyBytes: limits.maxBodyBytes)
    }

    /// Adds bytes the peer sent.
    mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// Whether a head has begun: bytes of the next request are buffered (its head deadline runs).
    var hasStartedHead: Bool {
        if case .head = state { return !buffer.isEmpty }
        return false
    }

    /// Whether the parser waits for the start or the rest of a head (not a body).
    var isInHead: Bool {
        if case .head = state { return true }
        return false
    }

    mutating func next() -> Event {
        switch state {
        case .failed(let rejection):
            return .rejected(rejection)
        case .head(let scanned):
            return nextHead(scanned: scanned)
        case .noBody:
            state = .head(scanned: 0)
            return .body(Data())
        case .length(let length):
            guard buffer.count >= length else { return .needMore }
            let body = Data(buffer[0..<length])
            buffer.removeFirst(length)
            state = .head(scanned: 0)
            return .body(body)
        case .chunkLine(let body):
            guard let line = takeLine(limit: Self.maxChunkLineBytes) else { return .needMore }
            guard case .some(let line) = line else { return fail(.badRequest("line too long in a chunked body")) }
            guard let size = Self.chunkSize(line) else { return fail(.badRequest("bad chunk size line")) }
            if size == 0 {
                state = .trailers(total: 0, body: body)
                return next()
            }
            // Compared by subtraction: a hostile size near Int.max must not overflow.
            guard size <= maxBodyBytes - body.count else { return fail(HTTPRejection(413, "body too large")) }
            state = .chunkData(size: size, body: body)
            return .chunk(size)
        case .chunkData(let size, var body):
            // The chunk's data must end with CRLF (or a bare LF, as lines may).
            guard buffer.count >= size + 1 else { return .needMore }
            var terminator = 0
            if buffer[size] == HTTPHead.lineFeed {
                terminator = 1
            } else if buffer[size] == HTTPHead.carriageReturn {
                guard buffer.count >= size + 2 else { return .needMore }
                if buffer[size + 1] == HTTPHead.lineFeed { terminator = 2 }
            }
            guard terminator > 0 else { return fail(.badRequest("chunk data not followed by CRLF")) }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + terminator)
            state = .chunkLine(body: body)
            return next()
        case .trailers(var total, let body):
            while true {
                guard let line = takeLine(limit: maxHeadBytes - total) else {
                    state = .trailers(total: total, body: body)
                    return .needMore
                }
                guard case .some(let line) = line else { return fail(.badRequest("line too long in a chunked body")) }
                if line.isEmpty {
                    state = .head(scanned: 0)
                    return .body(body)
                }
                total += line.count + 2
            }
        }
    }

    private mutating func fail(_ rejection: HTTPRejection) -> Event {
        state = .failed(rejection)
        return .rejected(rejection)
    }

    // MARK: - Head

    private mutating func nextHead(scanned start: Int) -> Event {
        var scanned = start
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        while buffer.first == HTTPHead.lineFeed || (buffer.count >= 2 && buffer[0] == HTTPHead.carriageReturn && buffer[1] == HTTPHead.lineFeed) {
            buffer.removeFirst(buffer[0] == HTTPHead.lineFeed ? 1 : 2)
            scanned = 0
        }
        guard let end = headEnd(scanned: &scanned) else {
            guard buffer.count <= maxHeadBytes else { return fail(HTTPRejection(413, "head too large")) }
            state = .head(scanned: scanned)
            return .needMore
        }
        guard end.length <= maxHeadBytes else { return fail(HTTPRejection(413, "head too large")) }
        let parsed = HTTPHead.parse(buffer[0..<end.length])
        buffer.removeFirst(end.consumed)
        switch parsed {
        case .failure(let rejection):
            return fail(rejection)
        case .success(let head):
            switch head.framing {
            case .none: state = .noBody
            case .length(let length):
                guard length <= maxBodyBytes else { return fail(HTTPRejection(413, "body too large")) }
                state = .length(length)
            case .chunked: state = .chunkLine(body: Data())
            }
            return .head(head)
        }
    }

    /// Finds the empty line that ends the head: the head's length (through its last line's
    /// LF) and the bytes to consume (through the empty line). `scanned` keeps the search
    /// from starting over on every feed.
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

    // MARK: - Lines

    /// One line (without its CRLF or LF), consumed: nil when it is not complete yet, `.some(nil)`
    /// when it runs over `limit` bytes.
    private mutating func takeLine(limit: Int) -> ArraySlice<UInt8>?? {
        guard let end = buffer.firstIndex(of: HTTPHead.lineFeed) else {
            return buffer.count > limit ? .some(nil) : nil
        }
        guard end <= limit else { return .some(nil) }
        var line = buffer[0..<end]
        if line.last == HTTPHead.carriageReturn { line = line.dropLast() }
        let copy = ArraySlice(Array(line))
        buffer.removeFirst(end + 1)
        return .some(copy)
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
}
