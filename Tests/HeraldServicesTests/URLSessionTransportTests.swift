import Foundation
import HeraldHTTP
import HeraldSandbox
import HeraldTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import HeraldServices

/// Every transport (``URLSessionTransport`` for https, ``SocketHTTPTransport`` for http, and
/// the ``SchemeRoutingTransport`` the daemon uses) held to the ``HTTPTransport`` contract.
@Suite struct URLSessionTransportTests {
    @Test(arguments: TransportKind.allCases)
    func keepsStatusHeadersAndBodyOfErrorResponses(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(transport: kind) { harness in
            let url = harness.sandbox.baseURL.appendingPathComponent("nowhere")
            let response = try await harness.transport.send(HTTPRequest(url: url))
            #expect(response.status == 404)
            #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(String(decoding: response.body, as: UTF8.self).contains("\"code\":34"))
        }
    }

    /// A request that follows no redirects gets the redirect itself, whatever the transport
    /// (a webhook POST must not become a GET; a feed reports a permanent move).
    @Test(arguments: TransportKind.allCases)
    func aRequestThatFollowsNoRedirectsGetsTheRedirectItself(_ kind: TransportKind) async throws {
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
            request.path == "/old" ? HTTPServerResponse(status: 302, headers: [("Location", "/new")], body: Data())
                : HTTPServerResponse(status: 200, headers: [], body: Data("new".utf8))
        })
        server.start()
        defer { Task { await server.stop() } }
        let transport = kind.make(defaultTimeout: .seconds(60))
        let url = URL(string: "http://127.0.0.1:\(server.port)/old")!
        let held = try await transport.send(HTTPRequest(method: "POST", url: url, body: Data("{}".utf8), followsRedirects: false))
        #expect(held.status == 302 && held.headers["Location"] == "/new")
        if kind != .socket {
            let followed = try await transport.send(HTTPRequest(url: url))
            #expect(followed.status == 200 && followed.body == Data("new".utf8))
        }
    }

    /// The answer would come after an hour (the sandbox's stop cuts it short), past the 60 s
    /// timeout: only the cancellation can make the request end in `.cancelled`, however slow the
    /// machine (5 s of latency was seen answering first under the thread sanitizer).
    @Test(.timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func cancellingTheTaskCancelsTheRequest(_ kind: TransportKind) async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(latency: .seconds(3_600)) }, timeout: .seconds(60), transport: kind) { harness in
            let client = harness.tiqav()
            let task = Task { await serviceError { try await client.random() } }
            // Cancel only once the request is on the server.
            await harness.sandbox.waitForRequests(1)
            #expect(harness.sandbox.requestsReceived == 1)
            task.cancel()
            let error = await task.value
            #expect(error?.kind == .cancelled)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTaskCancelledBeforeSendingSendsNothing(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(transport: kind) { harness in
            let client = harness.tiqav()
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await serviceError { try await client.random() }
            }
            let error = await task.value
            #expect(error?.kind == .cancelled)
            #expect(harness.sandbox.requestsReceived == 0)
        }
    }

    /// The answer is scripted 60 s late; the request's own 300 ms deadline must be what ends
    /// it, reported as a timeout naming that deadline.
    @Test(arguments: TransportKind.allCases)
    func theRequestDeadlineIsReportedAsATimeout(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(timeout: .seconds(60), transport: kind) { harness in
            try harness.sandbox.script(path: "/search/random.json", [.delay(.seconds(60))])
            let error = await serviceError { try await harness.tiqav(timeout: .milliseconds(300)).random() }
            #expect(error?.kind == .timeout)
            #expect(error?.message.contains("0.3 seconds") == true, "\(String(describing: error))")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theDefaultDeadlineAppliesWithoutARequestTimeout(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(timeout: .milliseconds(300), transport: kind) { harness in
            try harness.sandbox.script(path: "/search/random.json", [.delay(.seconds(60))])
            let error = await serviceError { try await harness.tiqav().random() }
            #expect(error?.kind == .timeout)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDroppedConnectionIsATransportErrorAndTheNextRequestWorks(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(transport: kind) { harness in
            try harness.sandbox.script(path: "/search/random.json", [.drop])
            let error = await serviceError { try await harness.tiqav().random() }
            #expect(error?.kind == .transport)
            #expect(error?.underlying?.isEmpty == false)
            let images = try await harness.tiqav().random()
            #expect(!images.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func refusedConnectionIsATransportError(_ kind: TransportKind) async throws {
        // A port that is bound but not listening refuses connections, and stays ours for the
        // whole test (a stopped server's port could be reused by a test running alongside).
        let (descriptor, port) = try Self.boundButNotListening()
        defer { close(descriptor) }
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/search/random.json"))
        let transport = kind.make(defaultTimeout: .seconds(5))
        let error = await serviceError { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying?.isEmpty == false)
    }

    struct SocketError: Error {}

    static func boundButNotListening() throws -> (Int32, UInt16) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SocketError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw SocketError()
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// Segments over 1 MB (libcurl sends them with `Expect: 100-continue`) in a chunked
    /// upload, on each transport.
    @Test(arguments: TransportKind.allCases)
    func largeSegmentsOfAChunkedUploadArrive(_ kind: TransportKind) async throws {
        try await SandboxHarness.run(transport: kind) { harness in
            let client = harness.twitter(segmentSize: 1_500_000)
            let media = try await client.uploadMedia(MP4Fixture.sized(3_200_000), mediaType: "video/mp4", category: "tweet_video")
            #expect(media.size == 3_200_000)
        }
    }

    @Test func rateLimitResetFallsBackToRetryAfter() {
        let now = Date(timeIntervalSince1970: 1_000)
        #expect(RateLimit(headers: ["Retry-After": "30"], now: now)?.reset == Date(timeIntervalSince1970: 1_030))
        #expect(RateLimit(headers: ["retry-after": "Sun, 06 Nov 1994 08:49:37 GMT"], now: now)?.reset == Date(timeIntervalSince1970: 784_111_777))
        #expect(RateLimit(headers: ["x-rate-limit-reset": "1500", "Retry-After": "30"], now: now)?.reset == Date(timeIntervalSince1970: 1_500))
        #expect(RateLimit(headers: [:], now: now) == nil)
        #expect(RateLimit(headers: ["x-rate-limit-reset": "inf", "Retry-After": "nan"], now: now) == nil)
        #expect(ServiceDates.formatTwitter(Date(timeIntervalSince1970: .infinity)) == "Thu Jan 01 00:00:00 +0000 1970")
    }
}
