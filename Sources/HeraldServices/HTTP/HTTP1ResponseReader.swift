import Foundation

/// Reads one HTTP/1.1 response from bytes as they arrive: the head (interim `1xx` answers
/// skipped), then a body framed by `Content-Length`, by chunked transfer coding, or by the end
/// of the connection.
///
/// Bytes are fed with ``feed(_:)``; ``next()`` says whether the response is complete, and
/// ``finish()`` is called once the peer closed. Each byte is examined a bounded number of times,
/// so a large chunked body is not rescanned as it grows.
struct HTTP1ResponseReader {
    /// The largest head accepted.
    static let maxHeadBytes = 64 * 1024
    /// The largest body accepted.
    static let maxBodyBytes = 64 * 1024 * 1024

    private enum Stage {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case complete
    }

    /// Whether the request was `HEAD`, whose response has headers but never a body.
    let isHeadRequest: Bool
    /// The largest body accepted (at most ``maxBodyBytes``).
    let bodyLimit: Int
    private var stage = Stage.head
    private var buffer: [UInt8] = []
    private var position = 0
    private var status = 0
    private var headers = HTTPHeaders()
    private var body = Data()

    init(isHeadRequest: Bool = false, bodyLimit: Int = HTTP1ResponseReader.maxBodyBytes) {
        self.isHeadRequest = isHeadRequest
        self.bodyLimit = min(max(0, bodyLimit), Self.maxBodyBytes)
    }

    /// Whether the connection may carry another request once this response is complete: the
    /// server did not say `Connection: close` (HTTP/1.1) or said `keep-alive` (HTTP/1.0), the
    /// body was not framed by the close, and no byte came after the response.
    var isReusable: Bool {
        guard case .complete = stage, persistent else { return false }
        return position == buffer.count
    }
    private var persistent = false

    /// Whether no byte of a response has arrived yet.
    var isEmpty: Bool { buffer.isEmpty && status == 0 }

    /// Appends bytes received from the connection.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if position > 0 && position >= buffer.count / 2 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Parses what was fed; returns the response once it is complete, nil when more is needed.
    /// - Throws: a description of what is malformed.
    mutating func next() throws(HTTP1ResponseError) -> HTTPResponse? {
        while true {
            switch stage {
            case .head:
                guard let end = find(crlfcrlf, from: position) else {
                    if buffer.count - position > Self.maxHeadBytes { throw .init("the response head is larger than 64 KiB") }
                    return nil
                }
                let head = String(decoding: buffer[position..<end], as: UTF8.self)
                position = end + 4
                try parseHead(head)
            case .fixed(let remaining):
                let available = min(remaining, buffer.count - position)
                body.append(contentsOf: buffer[position..<(position + available)])
                position += available
                guard available == remaining else {
                    stage = .fixed(remaining: remaining - available)
                    return nil
                }
                stage = .complete
            case .chunkSize:
                guard let end = find(crlf, from: position) else {
                    if buffer.count - position > 1024 { throw .init("a chunk size line is longer than 1 KiB") }
                    return nil
                }
                let line = String(decoding: buffer[position..<end], as: UTF8.self)
                position = end + 2
                let digits = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                guard let size = Int(digits, radix: 16), size >= 0 else { throw .init("the chunk size \"\(line.prefix(40))\" is not hexadecimal") }
                guard size <= bodyLimit - body.count else { throw .tooLarge(bodyLimit) }
                stage = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let available = min(remaining, buffer.count - position)
                body.append(contentsOf: buffer[position..<(position + available)])
                position += available
                guard available == remaining else {
                    stage = .chunkData(remaining: remaining - available)
                    return nil
                }
                stage = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - position >= 2 else { return nil }
                guard buffer[position] == 13, buffer[position + 1] == 10 else { throw .init("a chunk does not end with CRLF") }
                position += 2
                stage = .chunkSize
            case .trailers:
                guard let end = find(crlf, from: position) else {
                    if buffer.count - position > Self.maxHeadBytes { throw .init("the trailers are larger than 64 KiB") }
                    return nil
                }
                let isLast = end == position
                position = end + 2
                if isLast { stage = .complete }
            case .untilClose:
                let available = buffer.count - position
                guard body.count + available <= bodyLimit else { throw .tooLarge(bodyLimit) }
                body.append(contentsOf: buffer[position...])
                position = buffer.count
                return nil
            case .complete:
                return HTTPResponse(status: status, headers: headers, body: body)
            }
        }
    }

    /// Called once the peer closed the connection: returns the response if it is complete
    /// (a body framed by the close always is).
    /// - Throws: when the connection closed before the response was complete.
    mutating func finish() throws(HTTP1ResponseError) -> HTTPResponse {
        if let response = try next() { return response }
        switch stage {
        case .untilClose:
            stage = .complete
            return HTTPResponse(status: status, headers: headers, body: body)
        case .head where isEmpty:
            throw .init("the server closed the connection without answering")
        case .head:
            throw .init("the server closed the connection in the middle of the response head")
        default:
            throw .init("the server closed the connection after \(body.count) bytes of the response body")
        }
    }

    private mutating func parseHead(_ head: String) throws(HTTP1ResponseError) {
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]), (100...999).contains(code) else {
            throw .init("the status line \"\(statusLine.prefix(80))\" is not HTTP/1.x")
        }
        var fields = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .init("the header line \"\(line.prefix(40))\" has no colon") }
            fields.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        // An interim answer (100 Continue, 103 Early Hints) precedes the real one.
        if (100..<200).contains(code) && code != 101 { return }
        status = code
        headers = fields
        let connection = fields["Connection"]?.lowercased() ?? ""
        persistent = parts[0] == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
        if isHeadRequest || code == 204 || code == 304 || code == 101 {
            stage = .complete
        } else if let coding = fields["Transfer-Encoding"], coding.lowercased().contains("chunked") {
            stage = .chunkSize
        } else if let lengthText = fields["Content-Length"] {
            guard let length = Int(lengthText.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw .init("the Content-Length \"\(lengthText.prefix(40))\" is not a number")
            }
            guard length <= bodyLimit else { throw .tooLarge(bodyLimit) }
            body.reserveCapacity(length)
            stage = length == 0 ? .complete : .fixed(remaining: length)
        } else {
            stage = .untilClose
            persistent = false
        }
    }

    private let crlf: [UInt8] = [13, 10]
    private let crlfcrlf: [UInt8] = [13, 10, 13, 10]

    private func find(_ pattern: [UInt8], from start: Int) -> Int? {
        guard buffer.count - start >= pattern.count else { return nil }
        var index = start
        let last = buffer.count - pattern.count
        while index <= last {
            if buffer[index] == pattern[0] {
                var matched = true
                for offset in 1..<pattern.count where buffer[index + offset] != pattern[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
