import Foundation
import HeraldHTTP
import HeraldSandbox
import HeraldTestSupport
import Testing

@testable import HeraldServices

/// The feed client's HTTP manners against the sandbox's feeds and a local server.
@Suite struct FeedClientTests {
    static func sandbox() async throws -> Sandbox {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        return try await Sandbox.start(SandboxConfiguration(now: { start }))
    }

    @Test func aConditionalGETOfAnUnchangedFeedIs304AndNoDocument() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let url = sandbox.baseURL.appendingPathComponent("feeds/news.atom")
        let client = FeedClient()
        let first = try await client.fetch(url)
        #expect(first.document?.format == .atom && first.document?.items.count == 5)
        #expect(first.validators.etag == "\"news.atom-5\"" && first.validators.lastModified != nil)
        let again = try await client.fetch(url, validators: first.validators)
        #expect(again.document == nil)
        #expect(again.validators == first.validators)
        let byDate = try await client.fetch(url, validators: FeedValidators(lastModified: first.validators.lastModified))
        #expect(byDate.document == nil)
    }

    @Test func aPermanentRedirectIsFollowedAndReported() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let fetched = try await FeedClient().fetch(sandbox.baseURL.appendingPathComponent("feeds/moved.rss"))
        #expect(fetched.document?.format == .rss2)
        #expect(fetched.movedTo == sandbox.baseURL.appendingPathComponent("feeds/news.rss"))
        #expect(fetched.url == fetched.movedTo)
    }

    @Test func retryAfterOn429And503SaysWhenToComeBack() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/feeds/news.rss", [.status(429), .status(503), .status(500)])
        let client = FeedClient()
        let url = sandbox.baseURL.appendingPathComponent("feeds/news.rss")
        for status in [429, 503] {
            let error = try await #require(throws: ServiceError.self) { try await client.fetch(url) }
            #expect(error.kind == .rateLimited && error.status == status && error.rateLimit?.reset != nil, "\(error)")
        }
        let error = try await #require(throws: ServiceError.self) { try await client.fetch(url) }
        #expect(error.kind == .httpStatus && error.status == 500)
    }

    @Test func aFiftyMegabyteFeedIsRefusedAtTheSizeBound() async throws {
        let huge = Data(repeating: UInt8(ascii: " "), count: 50 * 1024 * 1024)
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { _ in
            HTTPServerResponse(status: 200, headers: [("Content-Type", "application/rss+xml")], body: huge)
        })
        server.start()
        defer { Task { await server.stop() } }
        let error = try await #require(throws: ServiceError.self) {
            try await FeedClient().fetch(URL(string: "http://127.0.0.1:\(server.port)/big.rss")!)
        }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("larger than the limit of \(FeedClient.defaultMaxBytes) bytes"), "\(error)")
    }

    @Test func aWebPageWhereTheFeedShouldBeIsNamed() async throws {
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
            if request.path == "/old" { return HTTPServerResponse(status: 302, headers: [("Location", "/site")], body: Data()) }
            return HTTPServerResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                                      body: Data("<!doctype html>\n<html><head><link rel=alternate href=/feed></head><body>Hi</body></html>".utf8))
        })
        server.start()
        defer { Task { await server.stop() } }
        let error = try await #require(throws: ServiceError.self) {
            try await FeedClient().fetch(URL(string: "http://127.0.0.1:\(server.port)/old")!)
        }
        #expect(error.message.contains("HTML page, not a feed"), "\(error)")
    }

    @Test func aTemporaryRedirectIsFollowedButNotReportedAsAMove() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let target = sandbox.baseURL.appendingPathComponent("feeds/odd.xml").absoluteString
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { _ in
            HTTPServerResponse(status: 302, headers: [("Location", target)], body: Data())
        })
        server.start()
        defer { Task { await server.stop() } }
        let fetched = try await FeedClient().fetch(URL(string: "http://127.0.0.1:\(server.port)/feed")!)
        #expect(fetched.document?.format == .rss1 && fetched.movedTo == nil)
        #expect(fetched.document?.title == "Odd & valid — the sandbox's RDF")
        // The item without rdf:about is identified by its link.
        #expect(fetched.document?.items.contains { $0.id.hasSuffix("/odd/1") } == true)
    }
}
