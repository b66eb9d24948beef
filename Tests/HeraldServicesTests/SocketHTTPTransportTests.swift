import Foundation
import Testing

@testable import HeraldServices

/// The plain-http client: what it writes, the response framings it reads (which the sandbox
/// never sends), and how it fails.
@Suite struct SocketHTTPTransportTests {
    let transport = SocketHTTPTransport(defaultTimeout: .seconds(30))

    @Test func chunkedResponsesAreReassembled() async throws {
        let server = try RawResponseServer(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-One: 1\r\n\r\n"
                + "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nTrailer: yes\r\n\r\n")
        let response = try await transport.send(HTTPRequest(url: server.url.appendingPathComponent("chunked")))
        #expect(response.status == 200)
        #expect(response.headers["x-one"] == "1")
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world")
    }

    @Test func aBodyWithoutLengthEndsWithTheConnection() async throws {
        let server = try RawResponseServer("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
        let response = try await transport.send(HTTPRequest(url: server.url))
        #expect(String(decoding: response.body, as: UTF8.self) == "until the end")
    }

    @Test func interimAnswersAreSkipped() async throws {
        let server = try RawResponseServer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
        let response = try await transport.send(HTTPRequest(method: "POST", url: server.url, body: Data("x".utf8)))
        #expect(response.status == 201)
        #expect(response.body == Data("ok".utf8))
    }

    @Test func aBodyCutShortIsATransportError() async throws {
        let server = try RawResponseServer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
        let error = await serviceError { try await transport.send(HTTPRequest(url: server.url)) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.contains("after 10 bytes") == true, "\(String(describing: error))")
    }

    @Test func aMalformedStatusLineIsATransportError() async throws {
        let server = try RawResponseServer("SSH-2.0-OpenSSH\r\n\r\n")
        let error = await serviceError { try await transport.send(HTTPRequest(url: server.url)) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.contains("status line") == true)
    }

    @Test func theRequestHeadIsHTTP11WithTheConnectionFieldsItsOwn() async throws {
        let server = try RawResponseServer("HTTP/1.1 204 No Content\r\n\r\n")
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/a%20b/c?q=x%2By&z"))
        let request = HTTPRequest(
            method: "POST", url: url,
            headers: ["Content-Type": "text/plain", "Expect": "100-continue", "Content-Length": "999", "X-Key": "k"],
            body: Data("body".utf8))
        let response = try await transport.send(request)
        #expect(response.status == 204)
        let lines = await server.requestHead().components(separatedBy: "\r\n")
        #expect(lines.first == "POST /a%20b/c?q=x%2By&z HTTP/1.1")
        #expect(lines.contains("Host: 127.0.0.1:\(server.port)"))
        #expect(lines.contains("Content-Type: text/plain"))
        #expect(lines.contains("X-Key: k"))
        #expect(lines.contains("Content-Length: 4"))
        #expect(lines.contains("Connection: close"))
        #expect(!lines.contains { $0.lowercased().hasPrefix("expect:") })
        #expect(!lines.contains("Content-Length: 999"))
    }

    @Test func aLineBreakInAHeaderIsRefusedWithoutQuotingTheValue() async throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/"))
        let request = HTTPRequest(url: url, headers: ["Authorization": "secret\r\nX-Injected: 1"])
        let error = await serviceError { try await transport.send(request) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.contains("Authorization") == true)
        #expect(!String(describing: error).contains("secret"))
    }

    @Test func onlyHTTPAndHTTPSAreAccepted() async throws {
        let url = try #require(URL(string: "ftp://127.0.0.1:9/"))
        let error = await serviceError { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.contains("scheme") == true)
    }

    @Test func anUnresolvableHostIsATransportErrorNamingIt() async throws {
        let url = try #require(URL(string: "http://no-such-host.invalid/"))
        let error = await serviceError { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.contains("no-such-host.invalid") == true)
    }
}

/// The response reader on bytes alone: every split of the input gives the same response.
@Suite struct HTTP1ResponseReaderTests {
    static let chunked = Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n").utf8)

    func read(_ bytes: [UInt8], pieces: Int, isHead: Bool = false) throws -> HTTPResponse? {
        var reader = HTTP1ResponseReader(isHeadRequest: isHead)
        let size = max(1, bytes.count / pieces)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            bytes[start..<end].withUnsafeBytes { reader.feed($0) }
            if let response = try reader.next() { return response }
            start = end
        }
        return nil
    }

    @Test(arguments: [1, 2, 7, 1_000])
    func chunkedBodiesSurviveAnySplit(pieces: Int) throws {
        let response = try #require(try read(Self.chunked, pieces: pieces))
        #expect(String(decoding: response.body, as: UTF8.self) == "abc0123456789abcdef")
    }

    @Test func aContentLengthBodyIsCompleteWithoutTheClose() throws {
        let response = try #require(try read(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8), pieces: 5))
        #expect(response.body == Data("abc".utf8))
    }

    @Test func aHeadResponseHasNoBody() throws {
        let response = try #require(try read(Array("HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n".utf8), pieces: 1, isHead: true))
        #expect(response.body.isEmpty)
    }

    @Test func anOversizedBodyIsRefusedBeforeItArrives() {
        #expect(throws: HTTP1ResponseError.self) {
            try read(Array("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n".utf8), pieces: 1)
        }
    }

    @Test func aBadChunkSizeIsRefused() {
        #expect(throws: HTTP1ResponseError.self) {
            try read(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8), pieces: 1)
        }
    }
}
