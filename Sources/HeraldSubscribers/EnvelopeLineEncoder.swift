import Foundation
import Herald
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns an envelope into one JSON line: the same object `Envelope.encode(to:)` describes
/// (`seq`, `time`, `topic`, `sender`, `id`, `correlation`, `event`), with `time` (and every date
/// in the event) in ISO 8601 UTC with milliseconds.
///
/// The envelope's own fields are written by hand, with the bus id's text and the current
/// second's timestamp cached; the event is streamed by ``EventJSONWriter``, or by `JSONEncoder`
/// when the writer cannot follow it (remembered per event type). This is the sink's hot path.
/// Not thread-safe: ``FileSink`` keeps it behind its lock. Package-visible: the cluster bridge
/// sends the same object (without the newline) as a message's body.
package struct EnvelopeLineEncoder {
    private let encoder: JSONEncoder
    private let writer = EventJSONWriter()
    /// Event types ``EventJSONWriter`` could not write: straight to `JSONEncoder` next time.
    private var encoderOnly: Set<ObjectIdentifier> = []
    private var busID: UUID?
    private var busText: [UInt8] = []
    private var second = Int.min
    private var secondText: [UInt8] = []
    private var topicName = ""
    private var topicText: [UInt8] = [UInt8(ascii: "\""), UInt8(ascii: "\"")]

    package init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        }
    }

    /// The line for `envelope`, newline included.
    package mutating func line(for envelope: Envelope<any Event>) throws -> [UInt8] {
        var line: [UInt8] = []
        try append(envelope, to: &line)
        return line
    }

    /// Appends the line for `envelope`, newline included, to `line`; on a throw (the event did
    /// not encode) `line` is as it was.
    mutating func append(_ envelope: Envelope<any Event>, to line: inout [UInt8]) throws {
        let payload: any Event = envelope.event
        let type = ObjectIdentifier(Swift.type(of: payload))
        var event = Data()
        if encoderOnly.contains(type) { event = try encode(payload) }
        // No reserveCapacity: `line` is a whole batch's buffer, and reserving a line more would
        // reallocate it (exactly, not geometrically) for every line.
        let start = line.count
        line += #"{"seq":"#.utf8
        Self.appendDecimal(envelope.sequence, to: &line)
        line += #","time":""#.utf8
        appendTime(envelope.timestamp, to: &line)
        line += #"","topic":"#.utf8
        let topic = envelope.topic.name
        if topic != topicName {
            // Most lines repeat the previous line's topic: escape it once.
            topicName = topic
            topicText.removeAll(keepingCapacity: true)
            Self.appendString(topic, to: &topicText)
        }
        line += topicText
        if let sender = envelope.sender {
            line += #","sender":"#.utf8
            Self.appendString(sender.id, to: &line)
        }
        line += #","id":"#.utf8
        appendID(envelope.id, to: &line)
        line += #","correlation":"#.utf8
        appendID(envelope.correlationID, to: &line)
        line += #","event":"#.utf8
        if event.isEmpty {
            let eventStart = line.count
            do {
                try write(payload, to: &line)
            } catch {
                line.removeSubrange(eventStart...)
                encoderOnly.insert(type)
                do {
                    event = try encode(payload)
                } catch {
                    line.removeSubrange(start...)
                    throw error
                }
            }
        }
        line += event
        line += "}\n".utf8
    }

    private func write<E: Event>(_ event: E, to line: inout [UInt8]) throws { try writer.write(event, to: &line) }

    private func encode<E: Event>(_ event: E) throws -> Data { try encoder.encode(event) }

    private mutating func appendID(_ id: EventID, to line: inout [UInt8]) {
        if id.bus != busID {
            busID = id.bus
            busText = Array(id.bus.uuidString.lowercased().utf8)
        }
        line.append(UInt8(ascii: "\""))
        line += busText
        line.append(UInt8(ascii: ":"))
        Self.appendDecimal(id.sequence, to: &line)
        line.append(UInt8(ascii: "\""))
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSSZ`, formatted once per second.
    private mutating func appendTime(_ date: Date, to line: inout [UInt8]) {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (second, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSecond, fraction) = millisecond < 0 ? (second - 1, millisecond + 1000) : (second, millisecond)
        if wholeSecond != self.second {
            self.second = wholeSecond
            secondText = Self.secondText(wholeSecond)
        }
        line += secondText
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(fraction % 10))
        line.append(UInt8(ascii: "Z"))
    }

    private static func secondText(_ second: Int) -> [UInt8] {
        var time = time_t(second)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return Array("1970-01-01T00:00:00".utf8) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + "\(year)" : "\(year)"
        return Array("\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))".utf8)
    }

    /// `value` in decimal, without going through a `String`.
    static func appendDecimal(_ value: UInt64, to line: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: UInt64.max has 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            repeat {
                let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
                count += 1
                buffer[buffer.count - count] = UInt8(ascii: "0") + UInt8(digit)
                rest = quotient
            } while rest > 0
        }
        withUnsafeBytes(of: &digits) { buffer in line.append(contentsOf: buffer[(buffer.count - count)...]) }
    }

    /// A JSON string literal, as ``JSONString`` writes it.
    static func appendString(_ text: String, to line: inout [UInt8]) {
        JSONString.append(text, to: &line)
    }
}
