import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldHTTP

/// The server's HTTP/1.1 reading, driven byte by byte over a real socket.
@Suite(.timeLimit(.minutes(5))) struct HTTPParsingTests {
    /// A server that answers `GET /_sandbox/health` with `{"status":"ok"}`, a POST with 201 and
    /// the body it received, anything else with 200 and `METHOD path`.
    static func start() throws -> HTTPServer {
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
            if request.method == "POST" { return HTTPServerResponse(status: 201, body: request.body) }
            if request.path == "/_sandbox/health" { return HTTPServerResponse(status: 200, body: Data(#"{"status":"ok"}"#.utf8)) }
            return .text(200, "\(request.method) \(request.path)")
        })
        server.start()
        return server
    }

    private static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
    private func occurrences(of needle: String, in text: String) -> Int { Self.occurrences(of: needle, in: text) }

    @Test func pipelinedRequestsOnOneConnectionGetAnswersInOrder() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\nGET /search.json?q=cat HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = await client.read { Self.occurrences(of: "HTTP/1.1 200 OK", in: $0) == 2 && $0.hasSuffix("GET /search.json") }
        #expect(occurrences(of: "HTTP/1.1 200 OK", in: text) == 2)
        #expect(text.contains("Connection: keep-alive"))
        #expect(text.range(of: "{\"status\":\"ok\"}")?.lowerBound ?? text.endIndex < text.range(of: "GET /search.json")?.lowerBound ?? text.startIndex)
        await server.stop()
    }

    @Test func http10RequestsCloseTheConnectionByDefault() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.0\r\n\r\n")
        let text = await client.read { _ in false }
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.contains("Connection: close"))
        await server.stop()
    }

    @Test func chunkedBodyWithExtensionsAndTrailersIsReassembled() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        let json = #"{"description":"chunky"}"#
        let first = String(json.prefix(10))
        let rest = String(json.dropFirst(10))
        client.send(
            "POST /1/sandbox-tenant/objects/todos HTTP/1.1\r\nHost: x\r\nX-Application-Id: sandbox-app-id\r\n"
                + "X-Application-Key: sandbox-app-key\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n"
                + "\(String(first.utf8.count, radix: 16));name=value\r\n\(first)\r\n\(String(rest.utf8.count, radix: 16))\r\n\(rest)\r\n"
                + "0\r\nX-Trailer: yes\r\n\r\n")
        let text = await client.read { _ in false }
        #expect(text.hasPrefix("HTTP/1.1 201 Created"))
        #expect(text.contains(#""description":"chunky""#))
        #expect(text.contains("Connection: close"))
        await server.stop()
    }

    @Test func malformedRequestsAreAnswered400AndClosed() async throws {
        let server = try Self.start()
        for garbage in ["NONSENSE\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
                        "POST /1.1/x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                        "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"] {
            let client = try #require(RawClient(port: server.port))
            client.send(garbage)
            let text = await client.read { _ in false }
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"), "for \(garbage.debugDescription)")
        }
        let oversized = try #require(RawClient(port: server.port))
        oversized.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n")
        #expect(await oversized.read { _ in false }.hasPrefix("HTTP/1.1 413"))
        // The server is still fine afterwards.
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await server.stop()
    }

    @Test func hugeChunkSizesAfterAChunkAre413NotACrash() async throws {
        let server = try Self.start()
        for size in ["7fffffffffffffff", "ffffffffffffffff0"] {
            let client = try #require(RawClient(port: server.port))
            client.send("POST /1/sandbox-tenant/objects/todos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "1\r\na\r\n\(size)\r\n")
            let text = await client.read { _ in false }
            #expect(text.hasPrefix("HTTP/1.1 413") || text.hasPrefix("HTTP/1.1 400"), "for chunk size \(size)")
        }
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await server.stop()
    }

    @Test func seededRandomRequestBytesNeverBringTheServerDown() async throws {
        let server = try Self.start()
        // A fixed linear congruential sequence: the same mutations on every run.
        var state: UInt64 = 2026
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let seed = Array("POST /1.1/media/upload.json?command=STATUS HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
        for _ in 0..<60 {
            var bytes = seed
            for _ in 0..<(1 + Int(next() % 6)) {
                bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next())
            }
            let client = try #require(RawClient(port: server.port))
            client.send(String(decoding: bytes, as: UTF8.self) + "\r\n\r\n")
            client.shutdownWriting()
            _ = await client.read { _ in false }
        }
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await server.stop()
    }

    /// (what is wrong, the request)
    @Test(arguments: [
        ("two spaces in the request line", "GET  /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("a trailing space in the request line", "GET /_sandbox/health HTTP/1.1 \r\nHost: x\r\n\r\n"),
        ("a version that is not HTTP/d.d", "GET /_sandbox/health HTTP/1.10\r\nHost: x\r\n\r\n"),
        ("a signed Content-Length", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc"),
        ("conflicting Content-Lengths", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
        ("a Content-Length list that conflicts", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd"),
        ("Content-Length with chunked", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        ("chunk data without its CRLF", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n"),
        ("chunk data with a wrong terminator", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\rX0\r\n\r\n"),
        ("an over-long chunk-size line", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "x", count: 10_000)),
        ("a signed chunk size", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n"),
        ("a folded header line", "GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n"),
        ("a space before the colon", "GET /_sandbox/health HTTP/1.1\r\nHost : x\r\n\r\n"),
        ("a coding after chunked", "POST /1/t/objects/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
    ])
    func rfc9112ViolationsAreAnswered400AndClosed(problem: String, request: String) async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send(request)
        let received = await client.readToEnd()
        #expect(received.text.hasPrefix("HTTP/1.1 400 Bad Request"), "for \(problem): \(received.text.prefix(200).debugDescription)")
        #expect(received.text.contains("Connection: close"), "for \(problem)")
        #expect(received.closed)
        await server.stop()
    }

    /// (what is wrong, the request): RFC 9112 §3.2 requires a 400 for an HTTP/1.1 request
    /// without exactly one Host field of valid syntax, and §3.2 allows the authority form to
    /// CONNECT only and the asterisk form to OPTIONS only.
    @Test(arguments: [
        ("no Host", "GET /_sandbox/health HTTP/1.1\r\n\r\n"),
        ("no Host, bare LF", "GET /_sandbox/health HTTP/1.1\nConnection: close\n\n"),
        ("two Host fields", "GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n"),
        ("a Host with a space and a slash", "GET /_sandbox/health HTTP/1.1\r\nHost: a b/c\r\n\r\n"),
        ("a Host with userinfo", "GET /_sandbox/health HTTP/1.1\r\nHost: me@x\r\n\r\n"),
        ("a target that is no form of RFC 9112", "GET _sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("the authority form outside CONNECT", "GET x:80 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("the asterisk form outside OPTIONS", "GET * HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("CONNECT to a path", "CONNECT /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("an absolute form without a host", "GET http:///_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n"),
    ])
    func requestsWithoutOneValidHostOrWithAMisplacedTargetFormAre400(problem: String, request: String) async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send(request)
        let received = await client.readToEnd()
        #expect(received.text.hasPrefix("HTTP/1.1 400 Bad Request"), "for \(problem): \(received.text.prefix(200).debugDescription)")
        #expect(received.closed)
        #expect(server.requestsReceived == 0, "for \(problem): the handler saw it")
        await server.stop()
    }

    /// Each target form reaches the handler where RFC 9112 §3.2 allows it: the absolute form as
    /// its path and query (its host wins over Host, the scheme is case-insensitive), the
    /// authority form of CONNECT and the asterisk form of OPTIONS as sent; an HTTP/1.0 request
    /// may leave Host out.
    @Test func everyTargetFormReachesTheHandlerWhereRFC9112AllowsIt() async throws {
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
            .text(200, "\(request.method) \(request.rawPath) ?\(request.rawQuery)|")
        })
        server.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET http://127.0.0.1:8420/status HTTP/1.1\r\nHost: 127.0.0.1:8420\r\n\r\n"
            + "GET HTTP://other.example/events?topic=a.%3E&x HTTP/1.1\r\nHost: x\r\n\r\n"
            + "HEAD http://x HTTP/1.1\r\nHost: x\r\n\r\n"
            + "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"
            + "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET https://x:1?q HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let text = await client.readToEnd().text
        for answer in ["GET /status ?|", "GET /events ?topic=a.%3E&x|", "CONNECT example.com:443 ?|", "OPTIONS * ?|", "GET / ?q|"] {
            #expect(text.contains(answer), "no \(answer) in \(text.debugDescription)")
        }
        #expect(occurrences(of: "HTTP/1.1 200 OK", in: text) == 6)
        let old = try #require(RawClient(port: server.port))
        old.send("GET /_sandbox/health HTTP/1.0\r\n\r\n")
        #expect(await old.readToEnd().text.hasSuffix("GET /_sandbox/health ?|"))
        #expect(server.requestsReceived == 7)
        await server.stop()
    }

    @Test func identicalDuplicateContentLengthsAreOneLength() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab"
            + "GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let text = await client.readToEnd().text
        #expect(occurrences(of: "HTTP/1.1 200 OK", in: text) == 2, "got \(text.debugDescription)")
        await server.stop()
    }

    @Test func bareLFLineEndingsAreAcceptedAsRFC9112Allows() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\nHost: x\n\nGET /_sandbox/health HTTP/1.1\r\nHost: x\nConnection: close\n\r\n")
        let text = await client.readToEnd().text
        #expect(occurrences(of: "HTTP/1.1 200 OK", in: text) == 2, "got \(text.debugDescription)")
        #expect(text.hasSuffix(#"{"status":"ok"}"#))

        let chunked = try #require(RawClient(port: server.port))
        chunked.send("POST /1/sandbox-tenant/objects/todos HTTP/1.1\nHost: x\nX-Application-Id: sandbox-app-id\n"
            + "X-Application-Key: sandbox-app-key\nContent-Type: application/json\nTransfer-Encoding: chunked\nConnection: close\n\n"
            + "4\n{\"a\"\n3\n:1}\n0\n\n")
        let created = await chunked.readToEnd().text
        #expect(created.hasPrefix("HTTP/1.1 201 Created"), "got \(created.debugDescription)")
        await server.stop()
    }

    @Test func aBareCRInTheHeadIs400() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\rX-Smuggled: 1\r\n\r\n")
        #expect(await client.readToEnd().text.hasPrefix("HTTP/1.1 400 Bad Request"))
        await server.stop()
    }

    @Test func headIsAnsweredWithGETsHeadersAndNoBody() async throws {
        let server = try Self.start()
        let client = try #require(RawClient(port: server.port))
        // Keep-alive: the second response must start right where the first one's head ends.
        client.send("HEAD /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\nGET /_sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let text = await client.readToEnd().text
        let responses = text.components(separatedBy: "\r\n\r\n")
        #expect(responses.count == 3, "got \(text.debugDescription)")
        #expect(responses.first?.hasPrefix("HTTP/1.1 200 OK") == true)
        #expect(responses.first?.contains("Content-Length: 15") == true)
        #expect(responses.dropFirst().first?.hasPrefix("HTTP/1.1 200 OK") == true, "the HEAD response had a body: \(text.debugDescription)")
        #expect(responses.last == #"{"status":"ok"}"#)
        await server.stop()
    }
}
