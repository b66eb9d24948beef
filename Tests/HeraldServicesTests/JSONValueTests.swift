import Foundation
import HeraldServices
import Testing

/// The one JSON value: whole numbers decode exactly (ids above 2^53 stay as written) and
/// numbers compare by value whichever case holds them.
@Suite struct JSONValueTests {
    private func decoded(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }
    private func encoded(_ value: JSONValue) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }

    @Test func wholeNumbersStayExactBothWays() throws {
        #expect(try decoded("1050118621198921729") == .integer(1_050_118_621_198_921_729))
        #expect(try encoded(decoded("1050118621198921729")) == "1050118621198921729")
        #expect(try decoded("-9223372036854775808") == .integer(.min))
        #expect(try decoded("18446744073709551615") == .unsigned(.max))
        #expect(try encoded(decoded("18446744073709551615")) == "18446744073709551615")
        #expect(try decoded("1.5") == .number(1.5))
        #expect(try decoded("1e300") == .number(1e300))
        let object = try decoded(#"{"id":1050118621198921729,"n":[true,null,"x"]}"#)
        #expect(object["id"] == .integer(1_050_118_621_198_921_729))
        #expect(object["n"] == .array([.bool(true), .null, .string("x")]))
        #expect(object["missing"] == nil && JSONValue.string("x")["id"] == nil)
    }

    @Test func numbersCompareAndHashByValue() {
        #expect(JSONValue.integer(3) == .number(3))
        #expect(JSONValue.unsigned(3) == .integer(3))
        #expect(JSONValue.number(3.5) != .integer(3))
        #expect(JSONValue.integer(1_050_118_621_198_921_729) != .integer(1_050_118_621_198_921_728))
        #expect(JSONValue.integer(1_050_118_621_198_921_729) != .number(Double(1_050_118_621_198_921_729 as Int64)))  // the Double rounds it
        #expect(JSONValue.unsigned(.max) != .integer(-1))
        #expect(JSONValue.string("3") != .integer(3) && JSONValue.bool(true) != .integer(1))
        #expect(Set<JSONValue>([.integer(3), .number(3), .unsigned(3)]).count == 1)
        #expect(JSONValue.integer(2).doubleValue == 2 && JSONValue.unsigned(2).doubleValue == 2 && JSONValue.string("2").doubleValue == nil)
    }
}
