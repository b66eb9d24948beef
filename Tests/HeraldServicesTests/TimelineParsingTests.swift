import Foundation
import Testing

@testable import HeraldServices

@Suite struct TimelineParsingTests {
    @Test func jsonTimelineKeepsStringIDsBeyondDoublePrecision() throws {
        let statuses = try JSONBodyDecoder.decode([Status].self, from: Data(Fixtures.timelineJSON.utf8), contentType: "application/json; charset=utf-8")
        #expect(statuses.count == 2)
        #expect(statuses[0].id == "1050118621198921728")
        #expect(statuses[0].user.screenName == "TwitterDev")
        #expect(statuses[0].createdAt.timeIntervalSince1970 == 1_539_202_764)
        #expect(statuses[1].id == "9007199254740993")
        #expect(statuses[1].text == "日本語のテキスト")
        #expect(TimelinePage(statuses: statuses).newestID == "1050118621198921728")
    }

    @Test func jsonStatusRoundTripsThroughItsOwnEncoding() throws {
        let statuses = try JSONBodyDecoder.decode([Status].self, from: Data(Fixtures.timelineJSON.utf8))
        let again = try JSONBodyDecoder.decode([Status].self, from: JSONEncoder().encode(statuses))
        #expect(again == statuses)
    }

    @Test func objectWhereArrayExpectedIsADecodeError() throws {
        let body = Data(#"{"errors":[{"code":34,"message":"Sorry, that page does not exist"}]}"#.utf8)
        let error = try #require(throws: ServiceError.self) { try JSONBodyDecoder.decode([Status].self, from: body) }
        #expect(error.kind == .decoding)
        #expect(error.location == "(root)")
        #expect(error.bodyExcerpt?.contains("errors") == true)
    }

    @Test func missingFieldReportsItsPath() throws {
        let body = Data(#"[{"id_str":"1","created_at":"Wed Oct 10 20:19:24 +0000 2018","text":"a","user":{"id_str":"2"}},{"id_str":"3","text":"b"}]"#.utf8)
        let error = try #require(throws: ServiceError.self) { try JSONBodyDecoder.decode([Status].self, from: body) }
        #expect(error.kind == .decoding)
        #expect(error.location == "[1].created_at")
    }

    @Test func emptyBodyWrongContentTypeAndTruncationAreDecodeErrors() throws {
        for (body, contentType) in [("", "application/json"), ("[1,2", "application/json"), ("[]", "text/html")] {
            let error = try #require(throws: ServiceError.self) {
                try JSONBodyDecoder.decode([Status].self, from: Data(body.utf8), contentType: contentType)
            }
            #expect(error.kind == .decoding)
        }
    }

    @Test func jsonSyntaxErrorsReportLineAndColumn() throws {
        let invalid = try #require(throws: ServiceError.self) { try JSONBodyDecoder.decode([Int].self, from: Data("[1,\n2,x]".utf8)) }
        #expect(invalid.location == "line 2, column 3 (byte 6)")
        let truncated = try #require(throws: ServiceError.self) { try JSONBodyDecoder.decode([Int].self, from: Data("[1,2".utf8)) }
        #expect(truncated.location == "end of body (byte 4)")
    }

    @Test func xmlTimelineTrimsDecodesEntitiesAndSkipsUnknownElements() throws {
        let statuses = try TimelineXMLParser.parse(Data(Fixtures.timelineXML.utf8))
        #expect(statuses.count == 2)
        #expect(statuses[0].text == "Fish & chips <3 🍟")
        #expect(statuses[0].user.name == "Twitter Dev")
        #expect(statuses[0].user.id == "2244994945")
        #expect(statuses[0].inReplyToStatusID == nil)
        #expect(statuses[1].text == "日本語 & more")
        #expect(statuses[1].inReplyToStatusID == "1050118621198921728")
        #expect(statuses[1].createdAt.timeIntervalSince1970 == 1_539_187_323)
    }

    @Test func truncatedXMLIsADecodeErrorWithPosition() throws {
        let truncated = Data(Fixtures.timelineXML.utf8.prefix(300))
        let error = try #require(throws: ServiceError.self) { try TimelineXMLParser.parse(truncated) }
        #expect(error.kind == .decoding)
        #expect(error.location?.hasPrefix("line") == true)
    }

    @Test func xmlWithWrongRootOrMissingFieldsIsADecodeError() throws {
        let wrongRoot = Data("<hash><error>Not found</error></hash>".utf8)
        #expect(throws: ServiceError.self) { try TimelineXMLParser.parse(wrongRoot) }
        let noID = Data("<statuses><status><text>x</text></status></statuses>".utf8)
        let error = try #require(throws: ServiceError.self) { try TimelineXMLParser.parse(noID) }
        #expect(error.location == "statuses/status[0]/id")
        #expect(throws: ServiceError.self) { try TimelineXMLParser.parse(Data()) }
        #expect(try TimelineXMLParser.parse(Data("<statuses type=\"array\"/>".utf8)).isEmpty)
    }

    @Test func baaSObjectsDecodeSystemAndFreeFields() throws {
        let body = #"{"results":[{"_id":"5a1","createdAt":"2018-10-10T20:19:24.500Z","updatedAt":"2018-10-10T20:19:25.000Z","etag":"e1","ACL":{"r":["g:anonymous"]},"description":"牛乳を買う","done":false}],"count":1}"#
        let result = try JSONBodyDecoder.decode(BaaSQueryResult.self, from: Data(body.utf8))
        #expect(result.count == 1)
        let object = try #require(result.results.first)
        #expect(object.todoDescription == "牛乳を買う")
        #expect(object.fields["done"] == .bool(false))
        #expect(object.fields["ACL"] == nil)
        #expect(object.createdAt?.timeIntervalSince1970 == 1_539_202_764.5)
        #expect(ServiceDates.formatISO8601(try #require(object.createdAt)) == "2018-10-10T20:19:24.500Z")
    }

    @Test func twitterDateFormattingRoundTrips() throws {
        let date = Date(timeIntervalSince1970: 1_539_202_764)
        #expect(ServiceDates.formatTwitter(date) == "Wed Oct 10 20:19:24 +0000 2018")
        #expect(ServiceDates.formatTwitter(Date(timeIntervalSince1970: 0)) == "Thu Jan 01 00:00:00 +0000 1970")
    }
}
