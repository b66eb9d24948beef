import Foundation
@testable import HeraldHTTP
import Testing

/// The request parser alone, fed bytes in every split a socket could give: what it makes of a
/// stream never depends on where the reads cut it. The malformed requests of the server's tests
/// and seeded mutations go through it too, without a socket.
@Suite struct HTTPRequestParserTests {
    /// Requests that are well formed, one per stream (the last holds two, pipelined).
    static let wellFormed = [
        "GET /_sandbox/health?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
        "\r\n\nGET / HTTP/1.1\nHost: x\nConnection: close\n\n",
        "POST /1.1/statuses/update.json HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nstatus=hi!!",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nchun\r\n3 \r\nky!\n0\r\nX-Trailer: 1\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokGET /c HTTP/1.0\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n",
    ]

    /// The server's table of RFC 9112 violations and malformed requests: each is refused.
    static let malformed = [
        "NONSENSE\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        "POST /1.1/x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET  /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n", "GET /_sandbox/health HTTP/1.1 \r\nHost: x\r\n\r\n",
        "GET /_sandbox/health HTTP/1.10\r\nHost: x\r\n\r\n", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\rX0\r\n\r\n",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "x", count: 10_000),
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n",
        "GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n", "GET /_sandbox/health HTTP/1.1\r\nHost : x\r\n\r\n",
        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "GET /_sandbox/health HTTP/1.1\r\n\r\n", "GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n",
        "GET _sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n", "GET x:80 HTTP/1.1\r\nHost: x\r\n\r\n", "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n",
        "POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n7fffffffffffffff\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nA: b\rc\r\n\r\n",
    ]

    @Test func everySplitOfEveryRequestGivesTheSameEvents() {
        for text in Self.wellFormed {
            let bytes = Array(text.utf8)
            let whole = Self.events([bytes])
            #expect(whole.last?.hasPrefix("body") == true, "\(text.debugDescription): \(whole)")
            #expect(!whole.contains { $0.hasPrefix("rejected") }, "\(text.debugDescription): \(whole)")
            for split in 0...bytes.count {
                #expect(Self.events([Array(bytes[..<split]), Array(bytes[split...])]) == whole, "\(text.debugDescription) split at \(split)")
            }
            #expect(Self.events(bytes.map { [$0] }) == whole, "\(text.debugDescription) byte by byte")
        }
    }

    @Test func theEventsSayWhatTheRequestsAre() {
        let events = Self.events([Array(Self.wellFormed[4].utf8)])
        #expect(events == ["head GET /a  HTTP/1.1 none", "body 0 ", "head POST /b  HTTP/1.1 length(2)", "body 2 ok",
                           "head GET /c  HTTP/1.0 none", "body 0 "])
        let chunked = Self.events([Array(Self.wellFormed[3].utf8)])
        #expect(chunked == ["head POST /1/t/objects/b  HTTP/1.1 chunked", "chunk 4", "chunk 3", "body 7 chunky!"])
    }

    @Test func everyMalformedRequestIsRefusedHoweverItIsSplit() {
        for text in Self.malformed {
            let bytes = Array(text.utf8)
            let whole = Self.events([bytes])
            #expect(whole.last?.hasPrefix("rejected 4") == true, "\(text.prefix(80).debugDescription): \(whole)")
            for split in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 64)) {
                #expect(Self.events([Array(bytes[..<split]), Array(bytes[split...])]) == whole, "\(text.prefix(80).debugDescription) split at \(split)")
            }
        }
    }

    @Test func aRejectionIsFinal() {
        var parser = HTTPRequestParser(maxHeadBytes: 65_536, maxBodyBytes: 1_048_576)
        parser.feed(Array("NONSENSE\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .rejected(let first) = parser.next(), case .rejected(let second) = parser.next() else {
            Issue.record("not rejected")
            return
        }
        #expect(first == second && first.status == 400)
    }

    @Test func seededMutationsNeverTrapAndDoNotDependOnTheSplit() {
        // A fixed linear congruential sequence: the same mutations on every run.
        var state: UInt64 = 2026
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let seed = Array("POST /1.1/media/upload.json?command=STATUS HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
            + Array(Self.wellFormed[3].utf8)
        for _ in 0..<400 {
            var bytes = seed
            for _ in 0..<(1 + Int(next() % 6)) {
                bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next())
            }
            let whole = Self.events([bytes])
            let split = Int(next() % UInt64(bytes.count + 1))
            #expect(Self.events([Array(bytes[..<split]), Array(bytes[split...])]) == whole)
        }
    }

    /// Feeds `pieces` one after another, asking for events after each until it needs more (or
    /// refuses), and describes them.
    static func events(_ pieces: [[UInt8]]) -> [String] {
        var parser = HTTPRequestParser(maxHeadBytes: 65_536, maxBodyBytes: 1_048_576)
        var events: [String] = []
        for piece in pieces {
            parser.feed(piece)
            loop: while true {
                switch parser.next() {
                case .needMore: break loop
                case .head(let head): events.append("head \(head.method) \(head.path) \(head.query) \(head.version) \(head.framing)")
                case .chunk(let size): events.append("chunk \(size)")
                case .body(let body): events.append("body \(body.count) \(String(decoding: body, as: UTF8.self))")
                case .rejected(let rejection):
                    events.append("rejected \(rejection.status) \(rejection.reason)")
                    return events
                }
            }
        }
        return events
    }
}
