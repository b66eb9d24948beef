/// The server-to-client half of the NATS protocol as a state machine fed arbitrary splits of the
/// byte stream: ``feed(_:)`` appends what a `recv` returned, ``next()`` hands out whole
/// operations until it needs more bytes.
///
/// It scans chunks for the end of a control line rather than stepping byte by byte through
/// per-letter states; a message's control line switches it to the payload state, which waits for
/// exactly `size + 2` bytes. Limits: a control line longer than ``maxControlLine`` and a message
/// larger than ``maxPassedOver`` are errors, so a garbage stream cannot make it buffer without end.
/// After an error it keeps throwing the same error: the stream has lost its framing. A header
/// block that cannot be read is not such an error: the sizes still frame the message, which is
/// handed over without headers and with ``NATSMessage/headerProblem`` saying why. Nor is a
/// message larger than ``maxPayload`` and at most ``maxPassedOver``, which a server may hold
/// (stored by JetStream under a larger `max_payload`) and deliver again and again: its bytes are
/// read and dropped as they come, never buffered, and it is handed over without headers or
/// payload, with ``NATSMessage/oversize`` set, so its receiver can settle it.
struct NATSProtocolParser {
    /// The longest control line (the operation and its arguments, `INFO` JSON included).
    var maxControlLine: Int
    /// The largest message (headers and body) buffered and handed over whole: the smaller of the
    /// server's `max_payload` and the client's cap.
    var maxPayload: Int
    /// The largest message passed over (read and dropped) when it exceeds ``maxPayload``; a
    /// larger one is a protocol error at its control line.
    var maxPassedOver: Int

    /// The default ``maxPassedOver``: 64 MiB, the largest `max_payload` nats-server takes with its
    /// default `max_pending`. No server that keeps to its limits sends more.
    static let passOverLimit = 64 * 1024 * 1024

    private struct PendingMessage {
        var subject: String
        var sid: UInt64
        var reply: String?
        /// The header block's size, for `HMSG` (which may be too small to hold one).
        var headerSize: Int?
        var totalSize: Int
        /// Larger than ``maxPayload``: its bytes are dropped as they come, counted here.
        var passedOver: Int?
    }

    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes after `start` already searched for a line feed, so a line that arrives a byte at a
    /// time is not searched again from its beginning each time.
    private var scanned = 0
    private var pending: PendingMessage?
    private var offset = 0
    private var failure: NATSProtocolError?

    /// A parser with the given limits.
    init(maxControlLine: Int = 32 * 1024, maxPayload: Int = 1024 * 1024, maxPassedOver: Int = Self.passOverLimit) {
        self.maxControlLine = maxControlLine
        self.maxPayload = maxPayload
        self.maxPassedOver = maxPassedOver
    }

    /// Appends received bytes.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet handed out as operations.
    var bufferedCount: Int { buffer.count - start }

    /// The next whole operation, or nil when more bytes are needed.
    /// - Throws: ``NATSProtocolError`` for bytes that are not the protocol (and again on every
    ///   later call).
    mutating func next() throws(NATSProtocolError) -> NATSServerOperation? {
        if let failure { throw failure }
        do throws(NATSProtocolError) {
            if let message = pending { return try payload(of: message) }
            return try controlLine()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func compact() {
        guard start > 0 else { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 4096, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }

    private mutating func advance(by count: Int) {
        start += count
        offset += count
        scanned = 0
    }

    private func fail(_ reason: String) -> NATSProtocolError {
        NATSProtocolError(reason: reason, offset: offset)
    }

    private mutating func payload(of message: PendingMessage) throws(NATSProtocolError) -> NATSServerOperation? {
        if message.passedOver != nil { return try passOver(message) }
        let needed = message.totalSize + 2
        guard buffer.count - start >= needed else { return nil }
        let end = start + message.totalSize
        guard buffer[end] == 13, buffer[end + 1] == 10 else {
            throw fail("the \(message.totalSize)-byte payload of a message on '\(message.subject)' is not followed by CRLF")
        }
        // The frame is whole whatever its header block says: a block that cannot be read is that
        // message's problem (another program published it), not the stream's.
        var headers: NATSHeaders?
        var headerProblem: String?
        if let headerSize = message.headerSize {
            if headerSize < NATSHeaders.minimumBlockSize {
                headerProblem = "the header block of \(headerSize) bytes is too short for NATS/1.0 and its end (a message on '\(message.subject)')"
            } else {
                do throws(HeaderBlockError) {
                    headers = try NATSHeaders.parse(buffer[start..<(start + headerSize)])
                } catch {
                    headerProblem = "\(error.reason) (a message on '\(message.subject)')"
                }
            }
        }
        let body = Array(buffer[(start + (message.headerSize ?? 0))..<end])
        pending = nil
        advance(by: needed)
        return .message(NATSMessage(subject: message.subject, replyTo: message.reply, headers: headers,
                                    payload: body, subscriptionID: message.sid, headerProblem: headerProblem))
    }

    /// Drops what arrived of an oversized message's bytes; the message (without them) once they
    /// and their CRLF are all read.
    private mutating func passOver(_ message: PendingMessage) throws(NATSProtocolError) -> NATSServerOperation? {
        var message = message
        let passed = message.passedOver ?? 0
        let dropped = min(buffer.count - start, message.totalSize - passed)
        if dropped > 0 { advance(by: dropped) }
        message.passedOver = passed + dropped
        guard passed + dropped == message.totalSize, buffer.count - start >= 2 else {
            pending = message
            return nil
        }
        guard buffer[start] == 13, buffer[start + 1] == 10 else {
            throw fail("the \(message.totalSize)-byte payload of a message on '\(message.subject)' is not followed by CRLF")
        }
        pending = nil
        advance(by: 2)
        return .message(NATSMessage(subject: message.subject, replyTo: message.reply, payload: [], subscriptionID: message.sid,
                                    oversize: message.totalSize))
    }

    private mutating func controlLine() throws(NATSProtocolError) -> NATSServerOperation? {
        let searchFrom = start + scanned
        guard let lineFeed = firstLineFeed(from: searchFrom) else {
            scanned = buffer.count - start
            if scanned > maxControlLine {
                throw fail("a control line is longer than \(maxControlLine) bytes without a line end")
            }
            return nil
        }
        var lineEnd = lineFeed
        if lineEnd > start, buffer[lineEnd - 1] == 13 { lineEnd -= 1 }
        guard lineEnd - start <= maxControlLine else {
            throw fail("a control line of \(lineEnd - start) bytes is longer than \(maxControlLine)")
        }
        let line = buffer[start..<lineEnd]
        let parsed = try parse(line: line)
        advance(by: lineFeed + 1 - start)
        switch parsed {
        case .operation(let operation): return operation
        case .message(let message):
            pending = message
            return try payload(of: message)
        }
    }

    private func firstLineFeed(from index: Int) -> Int? {
        buffer.withUnsafeBufferPointer { bytes -> Int? in
            var position = index
            while position < bytes.count {
                if bytes[position] == 10 { return position }
                position += 1
            }
            return nil
        }
    }

    private enum ParsedLine {
        case operation(NATSServerOperation)
        case message(PendingMessage)
    }

    private func parse(line: ArraySlice<UInt8>) throws(NATSProtocolError) -> ParsedLine {
        let nameEnd = line.firstIndex { $0 == 32 || $0 == 9 } ?? line.endIndex
        let name = line[line.startIndex..<nameEnd]
        let rest = line[nameEnd...]
        switch Keyword(name) {
        case .msg:
            let arguments = Arguments(rest)
            guard arguments.count == 3 || arguments.count == 4 else {
                throw fail("MSG has \(arguments.count) arguments, not 3 or 4")
            }
            return .message(try beginMessage(
                subject: line[arguments[0]], sid: line[arguments[1]], reply: arguments.count == 4 ? line[arguments[2]] : nil,
                total: line[arguments[arguments.count - 1]], headerSize: nil))
        case .hmsg:
            let arguments = Arguments(rest)
            guard arguments.count == 4 || arguments.count == 5 else {
                throw fail("HMSG has \(arguments.count) arguments, not 4 or 5")
            }
            return .message(try beginMessage(
                subject: line[arguments[0]], sid: line[arguments[1]], reply: arguments.count == 5 ? line[arguments[2]] : nil,
                total: line[arguments[arguments.count - 1]], headerSize: line[arguments[arguments.count - 2]]))
        case .ping: return .operation(.ping)
        case .pong: return .operation(.pong)
        case .ok: return .operation(.ok)
        case .error:
            var text = String(decoding: rest, as: UTF8.self).trimmingSpaces
            if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") { text = String(text.dropFirst().dropLast()) }
            return .operation(.error(text))
        case .info:
            let json = Array(rest.drop { $0 == 32 || $0 == 9 })
            guard json.first == UInt8(ascii: "{") else { throw fail("INFO is not followed by a JSON object") }
            return .operation(.info(json))
        case .unknown:
            let shown = String(decoding: line.prefix(24), as: UTF8.self).unicodeScalars
                .map { $0.value >= 32 && $0.value < 127 ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
            throw fail("'\(shown)' is not a NATS server operation")
        }
    }

    /// Reads `subject sid [reply] size` (the size being the total one for HMSG) and waits for the
    /// payload.
    private func beginMessage(subject subjectBytes: ArraySlice<UInt8>, sid sidBytes: ArraySlice<UInt8>, reply replyBytes: ArraySlice<UInt8>?,
                              total totalBytes: ArraySlice<UInt8>, headerSize: ArraySlice<UInt8>?) throws(NATSProtocolError) -> PendingMessage {
        let subject = String(decoding: subjectBytes, as: UTF8.self)
        guard let sid = Self.number(sidBytes) else {
            throw fail("the subscription id '\(String(decoding: sidBytes.prefix(24), as: UTF8.self))' of a message on '\(subject)' is not a number")
        }
        let reply = replyBytes.map { String(decoding: $0, as: UTF8.self) }
        guard let total = Self.number(totalBytes) else {
            throw fail("the size '\(String(decoding: totalBytes.prefix(24), as: UTF8.self))' of a message on '\(subject)' is not a number")
        }
        var headers: Int?
        if let headerSize {
            guard let parsed = Self.number(headerSize) else {
                throw fail("the header size '\(String(decoding: headerSize.prefix(24), as: UTF8.self))' of a message on '\(subject)' is not a number")
            }
            // The sizes frame the stream: sizes that contradict each other leave nothing to trust.
            guard parsed <= total else { throw fail("the header size \(parsed) of a message on '\(subject)' exceeds its total size \(total)") }
            headers = Int(parsed)
        }
        guard total <= UInt64(max(maxPayload, maxPassedOver)) else {
            throw fail("a message on '\(subject)' of \(total) bytes exceeds the maximum payload of \(maxPayload) "
                       + "and the \(max(maxPayload, maxPassedOver)) bytes a NATS server may send at most")
        }
        return PendingMessage(subject: subject, sid: sid, reply: reply, headerSize: headers, totalSize: Int(total),
                              passedOver: total > UInt64(maxPayload) ? 0 : nil)
    }

    /// The operation names, matched without building strings (case-insensitively, as servers
    /// may send either case).
    private enum Keyword {
        case msg, hmsg, ping, pong, ok, error, info, unknown

        init(_ bytes: ArraySlice<UInt8>) {
            switch Self.packed(bytes) {
            case Names.msg: self = .msg
            case Names.hmsg: self = .hmsg
            case Names.ping: self = .ping
            case Names.pong: self = .pong
            case Names.ok: self = .ok
            case Names.error: self = .error
            case Names.info: self = .info
            default: self = .unknown
            }
        }

        private enum Names {
            static let msg = packed("MSG".utf8), hmsg = packed("HMSG".utf8), ping = packed("PING".utf8)
            static let pong = packed("PONG".utf8), ok = packed("+OK".utf8), error = packed("-ERR".utf8), info = packed("INFO".utf8)
        }

        /// Up to four bytes upper-cased, with their count, in one integer (0 for longer names).
        static func packed(_ bytes: some Collection<UInt8>) -> UInt64 {
            guard bytes.count <= 4 else { return 0 }
            var value = UInt64(bytes.count) << 32
            var shift: UInt64 = 0
            for byte in bytes {
                value |= UInt64(byte >= 97 && byte <= 122 ? byte - 32 : byte) << shift
                shift += 8
            }
            return value
        }
    }

    /// The white-space separated arguments of a control line, as index ranges into it: the
    /// first five kept, all counted (a message line has at most five), without allocating.
    private struct Arguments {
        private var ranges = (0..<0, 0..<0, 0..<0, 0..<0, 0..<0)
        private(set) var count = 0

        init(_ bytes: ArraySlice<UInt8>) {
            var index = bytes.startIndex
            while index < bytes.endIndex {
                while index < bytes.endIndex, bytes[index] == 32 || bytes[index] == 9 { index += 1 }
                guard index < bytes.endIndex else { break }
                let start = index
                while index < bytes.endIndex, bytes[index] != 32, bytes[index] != 9 { index += 1 }
                switch count {
                case 0: ranges.0 = start..<index
                case 1: ranges.1 = start..<index
                case 2: ranges.2 = start..<index
                case 3: ranges.3 = start..<index
                case 4: ranges.4 = start..<index
                default: break
                }
                count += 1
            }
        }

        subscript(index: Int) -> Range<Int> {
            switch index {
            case 0: ranges.0
            case 1: ranges.1
            case 2: ranges.2
            case 3: ranges.3
            default: ranges.4
            }
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + UInt64(byte - 48)
        }
        return value
    }
}
