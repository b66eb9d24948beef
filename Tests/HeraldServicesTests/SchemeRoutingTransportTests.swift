import Foundation
import Synchronization
import Testing

@testable import HeraldServices
import HeraldSync

/// Which transport a URL goes to, and how plain-http redirects are followed.
@Suite struct SchemeRoutingTransportTests {
    /// Answers from a script, first to last (the last one repeats), recording each request.
    final class ScriptedTransport: HTTPTransport {
        private let state: SyncLock<(answers: [HTTPResponse], requests: [HTTPRequest])>

        init(_ answers: [HTTPResponse] = [HTTPResponse(status: 200)]) {
            state = SyncLock((answers, []))
        }

        var requests: [HTTPRequest] { state.withLock { $0.requests } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            state.withLock { state in
                state.requests.append(request)
                return state.answers.count > 1 ? state.answers.removeFirst() : state.answers[0]
            }
        }
    }

    @Test func eachSchemeGoesToItsTransport() async throws {
        let plain = ScriptedTransport()
        let secure = ScriptedTransport()
        let transport = SchemeRoutingTransport(plain: plain, secure: secure)
        _ = try await transport.send(HTTPRequest(url: try #require(URL(string: "http://a.example/x"))))
        _ = try await transport.send(HTTPRequest(url: try #require(URL(string: "HTTPS://b.example/y"))))
        #expect(plain.requests.map(\.url.host) == ["a.example"])
        #expect(secure.requests.map(\.url.host) == ["b.example"])
        let error = await serviceError { try await transport.send(HTTPRequest(url: try #require(URL(string: "ftp://c.example/")))) }
        #expect(error?.kind == .transport)
        #expect(plain.requests.count == 1 && secure.requests.count == 1)
    }

    @Test func aSeeOtherAfterAPostIsFollowedAsAGetWithoutCredentialsToAnotherHost() async throws {
        let plain = ScriptedTransport([
            HTTPResponse(status: 303, headers: ["Location": "/next?page=2"]),
            HTTPResponse(status: 307, headers: ["Location": "http://other.example/final"]),
            HTTPResponse(status: 200, body: Data("done".utf8)),
        ])
        let transport = SchemeRoutingTransport(plain: plain, secure: ScriptedTransport())
        let request = HTTPRequest(
            method: "POST", url: try #require(URL(string: "http://a.example/start")),
            headers: ["Authorization": "OAuth x", "Content-Type": "application/json"], body: Data("{}".utf8))
        let response = try await transport.send(request)
        #expect(response.body == Data("done".utf8))
        let sent = plain.requests
        #expect(sent.map(\.url.absoluteString) == ["http://a.example/start", "http://a.example/next?page=2", "http://other.example/final"])
        #expect(sent.map(\.method) == ["POST", "GET", "GET"])
        #expect(sent[1].body == nil && sent[1].headers["Authorization"] == "OAuth x")
        #expect(sent[2].headers["Authorization"] == nil)
    }

    @Test func aRedirectToHTTPSGoesToTheSecureTransport() async throws {
        let plain = ScriptedTransport([HTTPResponse(status: 301, headers: ["Location": "https://a.example/x"])])
        let secure = ScriptedTransport()
        let response = try await SchemeRoutingTransport(plain: plain, secure: secure)
            .send(HTTPRequest(url: try #require(URL(string: "http://a.example/x"))))
        #expect(response.status == 200)
        #expect(secure.requests.map(\.url.absoluteString) == ["https://a.example/x"])
    }

    @Test func redirectsStopAfterFive() async throws {
        let plain = ScriptedTransport([HTTPResponse(status: 302, headers: ["Location": "/again"])])
        let response = try await SchemeRoutingTransport(plain: plain, secure: ScriptedTransport())
            .send(HTTPRequest(url: try #require(URL(string: "http://a.example/"))))
        #expect(response.status == 302)
        #expect(plain.requests.count == 6)
    }
}
