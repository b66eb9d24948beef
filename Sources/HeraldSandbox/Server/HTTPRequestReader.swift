import Foundation

/// Reads HTTP/1.1 requests one after another from a keep-alive connection: the head, then a
/// `Content-Length` or chunked body. Answers `Expect: 100-continue` (libcurl sends it).
struct HTTPRequestReader {
    enum Outcome {
        case request(SandboxRequest)
        case closed
        case malformed(status: Int, reason: String)
    }

    static let maxHeadBytes = 64 * 1024
    static let maxBodyBytes = 64 * 1024 * 1024
    /// A connection idle this long between requests is closed.
    static let idleMilliseconds = 30_000

    let fd: Int32
    let isStopping: () -> Bool
    /// Told `true` when the connection starts waiting for a new request with nothing buffered,
    /// `false` once its first bytes arrive: the server may close an idle connection.
    let markIdle: (Bool) -> Void
    private var buffer: [UInt8] = []
    private var idle = false

    init(fd: Int32, isStopping: @escaping () -> Bool, markIdle: @escaping (Bool) -> Void = { _ in }) {
        self.fd = fd
        self.isStopping = isStopping
        self.markIdle = markIdle
    }

    mutating func next() -> Outcome {
        if buffer.isEmpty {
            idle = true
            markIdle(true)
        }
        defer {
            if idle {
                idle = false
                markIdle(false)
            }
        }
        guard let headEnd = readUntilHeadEnd() else {
            return buffer.count > Self.maxHeadBytes ? .malformed(status: 413, reason: "head too large") : .closed
        }
        guard headEnd <= Self.maxHeadBytes else { return .malformed(status: 413, reason: "head too large") }
        let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return .malformed(status: 400, reason: "bad request line")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return .malformed(status: 400, reason: "bad header line") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let target = String(requestLine[1])
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        var request = SandboxRequest(
            method: String(requestLine[0]), rawPath: String(target[..<pathEnd]),
            rawQuery: pathEnd < target.endIndex ? String(target[target.index(after: pathEnd)...]) : "",
            headers: headers, body: Data(), version: String(requestLine[2]))
        if request.header("Expect")?.lowercased() == "100-continue" {
            guard ResponseWriter.writeContinue(to: fd) else { return .closed }
        }
        if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            switch readChunkedBody() {
            case .success(let body): request.body = body
            case .failure(let failure): return failure.outcome
            }
        } else if let lengthText = request.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else { return .malformed(status: 400, reason: "bad Content-Length") }
            guard length <= Self.maxBodyBytes else { return .malformed(status: 413, reason: "body too large") }
            guard fill(atLeast: length) else { return .closed }
            request.body = Data(buffer[0..<length])
            buffer.removeFirst(length)
        }
        return .request(request)
    }

    private mutating func readChunkedBody() -> Result<Data, OutcomeError> {
        var body = Data()
        while true {
            guard let lineEnd = readLine() else { return .failure(OutcomeError(.closed)) }
            let sizeText = String(decoding: buffer[0..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            buffer.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                return .failure(OutcomeError(.malformed(status: 400, reason: "bad chunk size")))
            }
            if size == 0 {
                while let trailerEnd = readLine() {
                    buffer.removeFirst(trailerEnd + 2)
                    if trailerEnd == 0 { return .success(body) }
                }
                return .failure(OutcomeError(.closed))
            }
            // Compared by subtraction: a hostile size near Int.max must not overflow.
            guard size <= Self.maxBodyBytes - body.count else {
                return .failure(OutcomeError(.malformed(status: 413, reason: "body too large")))
            }
            guard fill(atLeast: size + 2) else { return .failure(OutcomeError(.closed)) }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + 2)
        }
    }

    struct OutcomeError: Error {
        var outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
    }

    private mutating func readUntilHeadEnd() -> Int? {
        var searched = 0
        while true {
            if let end = find([13, 10, 13, 10], from: max(0, searched - 3)) { return end }
            searched = buffer.count
            guard buffer.count <= Self.maxHeadBytes, receive() else { return nil }
        }
    }

    private mutating func readLine() -> Int? {
        while true {
            if let end = find([13, 10], from: 0) { return end }
            guard buffer.count <= Self.maxHeadBytes, receive() else { return nil }
        }
    }

    private mutating func fill(atLeast count: Int) -> Bool {
        while buffer.count < count {
            guard receive() else { return false }
        }
        return true
    }

    private func find(_ pattern: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= pattern.count, start <= buffer.count - pattern.count else { return nil }
        for index in start...(buffer.count - pattern.count) where buffer[index] == pattern[0] {
            if Array(buffer[index..<index + pattern.count]) == pattern { return index }
        }
        return nil
    }

    /// Waits for bytes, checking for stop every 50 ms; false on close, stop or idle timeout.
    private mutating func receive() -> Bool {
        var waited = 0
        while !isStopping() {
            if Socket.waitReadable(fd, milliseconds: 50) {
                guard let bytes = Socket.read(fd) else { return false }
                buffer.append(contentsOf: bytes)
                if idle {
                    idle = false
                    markIdle(false)
                }
                return true
            }
            waited += 50
            if waited >= Self.idleMilliseconds { return false }
        }
        return false
    }
}
