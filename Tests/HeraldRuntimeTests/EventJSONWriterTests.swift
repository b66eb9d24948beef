import Foundation
import Herald
@testable import HeraldSubscribers
import Testing

/// ``EventJSONWriter`` against `JSONEncoder` configured as the sink configures it.
@Suite struct EventJSONWriterTests {
    static func reference<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        }
        return Array(try encoder.encode(value))
    }

    static func written<T: Encodable>(_ value: T) throws -> [UInt8] {
        var bytes = Array("prefix:".utf8)
        try EventJSONWriter().write(value, to: &bytes)
        #expect(bytes.starts(with: "prefix:".utf8), "appends after what is there")
        return Array(bytes.dropFirst(7))
    }

    /// Equal as JSON values, key order aside.
    static func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (mine, theirs) = (try written(value), try reference(value))
        // Parsed and written again with sorted keys: the same value whatever the key order.
        let normalized = { (bytes: [UInt8]) in
            let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        }
        let (left, right) = (try normalized(mine), try normalized(theirs))
        #expect(left.count > 2)
        #expect(left == right, "\(String(decoding: mine, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case polygon([Int], closed: Bool)
        case empty
    }

    struct Inner: Codable { var name: String; var tags: [String]; var when: Date? }

    struct Everything: Codable {
        var int = Int.min, uint = UInt64.max, int8 = Int8.min, small: UInt8 = 0, negative = -42
        var double = 1.5, whole = 3.0, tiny = 1e-7, huge = 1.0e300, float: Float = 0.1
        var yes = true, no = false, missing: Int? = nil, present: Int? = 7
        var text = "quote \" back \\ slash / nl \n cr \r tab \t bell \u{7} bs \u{8} ff \u{c} é 🙂 \u{2028}"
        var date = Date(timeIntervalSince1970: 1_800_000_000.2509)
        var url = URL(string: "https://example.com/a/b?q=1&r=é")!
        var inner = Inner(name: "in", tags: ["a", "", "c"], when: Date(timeIntervalSince1970: -0.5))
        var list: [Inner] = [Inner(name: "x", tags: [], when: nil), Inner(name: "y", tags: ["z"], when: nil)]
        var nested = [[1, 2], [], [3]]
        var map = ["b": 2, "a": 1]
        var intKeys = [3: "three"]
        var shapes: [Shape] = [.circle(radius: 2), .polygon([1, 2, 3], closed: true), .empty]
        var optionals: [Int?] = [1, nil, 3]
    }

    @Test func writesWhatJSONEncoderWrites() throws {
        try Self.expectSame(Everything())
        try Self.expectSame(Inner(name: "", tags: [], when: nil))
        try Self.expectSame([1, 2, 3])
        try Self.expectSame("just a string")
        try Self.expectSame(Shape.empty)
    }

    @Test func keepsTheEncodingOrderOfSynthesizedTypes() throws {
        #expect(try Self.written(Inner(name: "n", tags: ["t"], when: nil)) == Array(#"{"name":"n","tags":["t"]}"#.utf8))
        #expect(try Self.written(Shape.polygon([1], closed: false))
                == Array(#"{"polygon":{"_0":[1],"closed":false}}"#.utf8))
    }

    struct EncodesNothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    struct AsksTwice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: AnyKey.self)
            try first.encode(1, forKey: AnyKey("a"))
            try first.encode(Inner(name: "x", tags: [], when: nil), forKey: AnyKey("inner"))
            // As a subclass does after `super.encode(to:)`: the same object again.
            var second = encoder.container(keyedBy: AnyKey.self)
            try second.encode(2, forKey: AnyKey("b"))
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    @Test func handWrittenEncodersThatStillStream() throws {
        #expect(try Self.written(EncodesNothing()) == Array("{}".utf8))
        try Self.expectSame([EncodesNothing()])
        try Self.expectSame(AsksTwice())
    }

    /// Writes to a container after a later sibling closed it.
    struct WritesLate: Encodable {
        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: AnyKey.self)
            var early = outer.nestedUnkeyedContainer(forKey: AnyKey("early"))
            try outer.encode(1, forKey: AnyKey("between"))
            try early.encode(2)
        }
    }

    class Base: Encodable { var base = 1 }
    final class Derived: Base {
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func whatItCannotFollowIsRefusedForJSONEncoder() throws {
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written(WritesLate()) }
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written(Derived()) }
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written(["data": Data([1, 2])]) }
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written([Decimal(1)]) }
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written([Double.nan]) }
    }

    /// Swallows the writer's refusal of a value and goes on, as `try?` in an `encode(to:)` would.
    struct Swallows: Encodable {
        enum Keys: String, CodingKey { case blob, nan, text }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try? container.encode(Data([1, 2, 3]), forKey: .blob)
            try? container.encode(Double.nan, forKey: .nan)
            try container.encode("t", forKey: .text)
        }
    }

    /// An event whose `encode(to:)` swallows refusals.
    struct SwallowingEvent: Event {
        static let topic: Topic = "test.sink.swallowing"
        var topic: Topic { Self.topic }
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws { try Swallows().encode(to: encoder) }
    }

    @Test func aRefusalTheValueSwallowsStillSendsItToJSONEncoder() throws {
        // Otherwise the line would hold `"blob":,` — not JSON, yet a whole line.
        #expect(throws: EventJSONWriter.Unsupported.self) { try Self.written(Swallows()) }
        let id = EventID(bus: UUID(), sequence: 1)
        let envelope = Envelope<any Event>(topic: SwallowingEvent.topic, sender: nil, id: id, correlationID: id,
                                           timestamp: FileSinkTests.publishedAt, event: SwallowingEvent())
        var encoder = EnvelopeLineEncoder()
        let line = try encoder.line(for: envelope)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        let event = try #require(object["event"] as? [String: Any])
        #expect(event["text"] as? String == "t" && event["blob"] as? String == "AQID" && event["nan"] == nil)
    }

    @Test func aWriterIsReusableAfterARefusal() throws {
        let writer = EventJSONWriter()
        var bytes: [UInt8] = []
        #expect(throws: EventJSONWriter.Unsupported.self) { try writer.write(WritesLate(), to: &bytes) }
        bytes.removeAll()
        try writer.write(Inner(name: "ok", tags: [], when: nil), to: &bytes)
        #expect(bytes == Array(#"{"name":"ok","tags":[]}"#.utf8))
    }
}
