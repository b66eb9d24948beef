import Foundation
import Herald
@testable import HeraldSubscribers
import Testing

@Suite struct EnvelopeLineEncoderTests {
    /// An event ``EventJSONWriter`` refuses (it holds `Data`), so JSONEncoder writes it.
    struct Blob: Event {
        static let topic: Topic = "test.line.blob"
        var topic: Topic { Self.topic }
        var bytes: Data
        var ratio: Double
    }

    static func envelope(_ event: any Event, topic: Topic? = nil) -> Envelope<any Event> {
        let id = EventID(bus: UUID(), sequence: 1)
        return Envelope(topic: topic ?? event.topic, sender: nil, id: id, correlationID: id,
                        timestamp: Date(timeIntervalSince1970: 0), event: event)
    }

    static func event(in line: [UInt8]) throws -> [String: Any] {
        let object = try #require(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        return try #require(object["event"] as? [String: Any])
    }

    @Test func anEventTheWriterRefusesIsEncodedByJSONEncoder() throws {
        var encoder = EnvelopeLineEncoder()
        for _ in 0..<2 {  // the second time straight to JSONEncoder
            let line = try encoder.line(for: Self.envelope(Blob(bytes: Data([1, 2, 3]), ratio: 0.5)))
            #expect(line.last == UInt8(ascii: "\n") && line.filter { $0 == UInt8(ascii: "\n") }.count == 1)
            let event = try Self.event(in: line)
            #expect(event["bytes"] as? String == "AQID")
            #expect(event["ratio"] as? Double == 0.5)
        }
    }

    @Test func anEventNoEncoderCanWriteLeavesTheBufferAsItWas() throws {
        var encoder = EnvelopeLineEncoder()
        var buffer = Array("earlier line\n".utf8)
        #expect(throws: EncodingError.self) {
            try encoder.append(Self.envelope(Blob(bytes: Data(), ratio: .infinity)), to: &buffer)
        }
        #expect(buffer == Array("earlier line\n".utf8))
        try encoder.append(Self.envelope(Blob(bytes: Data(), ratio: 1)), to: &buffer)
        #expect(try Self.event(in: Array(buffer.dropFirst(13)))["ratio"] as? Double == 1)
    }

    @Test(arguments: [0, 7, 10, 1_000_000, UInt64.max])
    func decimalsAreWrittenAsSwiftPrintsThem(value: UInt64) {
        var line = Array("x".utf8)
        EnvelopeLineEncoder.appendDecimal(value, to: &line)
        #expect(line == Array("x\(value)".utf8))
    }

    @Test func topicsAreEscapedWhenTheyChange() throws {
        var encoder = EnvelopeLineEncoder()
        for topic in ["test.line.one", "test.line.two", "test.line.two", "test.line.one"] {
            let line = try encoder.line(for: Self.envelope(Blob(bytes: Data(), ratio: 1), topic: Topic(validating: topic)))
            let object = try #require(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["topic"] as? String == topic)
        }
    }
}

/// The line encoder and the event writer share one escaper, which writes strings as JSONEncoder
/// does (they used to disagree on backspace and form feed).
@Suite struct JSONStringTests {
    @Test(arguments: ["plain", "quote \" backslash \\", "\u{8}\u{C}\n\r\t", "\u{0}\u{1}\u{1F}", "é🐦"])
    func stringsAreWrittenAsJSONEncoderWritesThem(text: String) throws {
        var bytes: [UInt8] = []
        JSONString.append(text, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: try JSONEncoder().encode(text), as: UTF8.self))
    }

    @Test func aSendersControlCharactersAreEscapedInTheLineAsInTheEvent() throws {
        struct Note: Event {
            var topic: Topic { "test.line.note" }
            var text: String
        }
        let id = EventID(bus: UUID(), sequence: 1)
        let envelope = Envelope<any Event>(topic: "test.line.note", sender: "bell\u{8}feed\u{C}", id: id, correlationID: id,
                                           timestamp: Date(timeIntervalSince1970: 0), event: Note(text: "bell\u{8}feed\u{C}"))
        var encoder = EnvelopeLineEncoder()
        let line = String(decoding: try encoder.line(for: envelope), as: UTF8.self)
        #expect(line.contains(#""sender":"bell\bfeed\f""#))
        #expect(line.contains(#""text":"bell\bfeed\f""#))
    }
}
