/// The client-to-server operations, written straight into an outbound byte buffer (no strings
/// are built per publish), and the scan that finds the frames in such a buffer again.
enum NATSClientFrames {
    static let crlf: [UInt8] = [13, 10]
    static let ping: [UInt8] = Array("PING\r\n".utf8)
    static let pong: [UInt8] = Array("PONG\r\n".utf8)

    /// `PUB subject [reply] size` or `HPUB subject [reply] headerSize totalSize`, then the
    /// header block, the payload and CRLF.
    static func appendPublish(
        into bytes: inout [UInt8], subject: String, reply: String?, headers: NATSHeaders?,
        payload: UnsafeRawBufferPointer
    ) {
        let headerCount = headers.map(\.encodedCount) ?? 0
        if headers == nil {
            bytes.append(contentsOf: [UInt8(ascii: "P"), UInt8(ascii: "U"), UInt8(ascii: "B"), 32])
        } else {
            bytes.append(contentsOf: [UInt8(ascii: "H"), UInt8(ascii: "P"), UInt8(ascii: "U"), UInt8(ascii: "B"), 32])
        }
        bytes.append(contentsOf: subject.utf8)
        bytes.append(32)
        if let reply {
            bytes.append(contentsOf: reply.utf8)
            bytes.append(32)
        }
        if let headers {
            appendDecimal(headerCount, into: &bytes)
            bytes.append(32)
            appendDecimal(headerCount + payload.count, into: &bytes)
            bytes.append(contentsOf: crlf)
            headers.encoded(into: &bytes)
        } else {
            appendDecimal(payload.count, into: &bytes)
            bytes.append(contentsOf: crlf)
        }
        bytes.append(contentsOf: payload)
        bytes.append(contentsOf: crlf)
    }

    /// `SUB subject [queue] sid`.
    static func appendSubscribe(into bytes: inout [UInt8], subject: String, queue: String?, sid: UInt64) {
        bytes.append(contentsOf: "SUB ".utf8)
        bytes.append(contentsOf: subject.utf8)
        bytes.append(32)
        if let queue {
            bytes.append(contentsOf: queue.utf8)
            bytes.append(32)
        }
        appendDecimal(Int(sid), into: &bytes)
        bytes.append(contentsOf: crlf)
    }

    /// `UNSUB sid [max]`.
    static func appendUnsubscribe(into bytes: inout [UInt8], sid: UInt64, max: Int?) {
        bytes.append(contentsOf: "UNSUB ".utf8)
        appendDecimal(Int(sid), into: &bytes)
        if let max {
            bytes.append(32)
            appendDecimal(max, into: &bytes)
        }
        bytes.append(contentsOf: crlf)
    }

    static func appendDecimal(_ value: Int, into bytes: inout [UInt8]) {
        guard value > 0 else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 && count < 20 {
                buffer[19 - count] = UInt8(48 + rest % 10)
                rest /= 10
                count += 1
            }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// What a frame of an outbound buffer is.
    enum FrameKind { case publish, control }

    /// Splits a buffer this client wrote into its frames. Used only when a connection drops, to
    /// carry the unsent publishes over to the next connection whole (and leave `SUB`s and `PING`s
    /// behind: the next connection sends its own).
    /// - Returns: each frame's kind and range; a trailing partial frame is not included.
    static func frames(in bytes: [UInt8], from start: Int = 0) -> [(kind: FrameKind, range: Range<Int>)] {
        var frames: [(FrameKind, Range<Int>)] = []
        var index = start
        while index < bytes.count {
            guard let lineFeed = bytes[index...].firstIndex(of: 10) else { break }
            let line = bytes[index..<lineFeed]
            let words = line.split(separator: 32)
            var end = lineFeed + 1
            let verb = words.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
            if verb == "PUB" || verb == "HPUB", let last = words.last, let size = Int(String(decoding: last, as: UTF8.self)) {
                end += size + 2
                guard end <= bytes.count else { break }
                frames.append((.publish, index..<end))
            } else {
                frames.append((.control, index..<end))
            }
            index = end
        }
        return frames
    }
}
