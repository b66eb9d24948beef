import Foundation
import Herald
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import HeraldStatus

/// Bad input and load on the status endpoint: garbage, huge heads, slow clients and 200 live
/// `/events` clients never stall it, and what it holds for its clients stays within its bounds.
///
/// Serialized, and with few stuck clients, to keep this test process under about a thousand
/// open descriptors: swift-corelibs-foundation's `Process.run` (other tests start curl and
/// herald) lists `/proc/self/fd` copying each entry's whole 256-byte `d_name`, which reads past
/// glibc's directory buffer once some 1,300 entries fill it, and crashed the suite once.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LoadTests {
    /// Raises this process's soft limit on descriptors to 4096 when it is lower (and the hard
    /// limit allows): 205 clients are 205 sockets on each side and a notifier pipe each. Never
    /// higher: Foundation's `Process.run` (other tests start curl) walks every descriptor number
    /// up to the limit, and crashed with the limit raised to a hard limit of millions.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 4096 else { return }
        limit.rlim_cur = min(4096, limit.rlim_max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    @Test func malformedRequestsAndHugeHeadsAreRefusedAndTheEndpointGoesOn() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        for garbage in ["NONSENSE\r\n\r\n", "GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n", "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                        "GET /metrics HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", "\u{01}\u{02}\u{03}\r\n\r\n",
                        "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", "GET /metrics HTTP/1.1\r\n\r\n"] {
            let client = try #require(RawClient(port: running.port))
            client.send(garbage)
            let answer = await client.readToEnd()
            #expect(answer.text.hasPrefix("HTTP/1.1 400") || answer.text.hasPrefix("HTTP/1.1 505"), "for \(garbage.debugDescription): \(answer.text.prefix(80))")
            #expect(answer.closed)
        }
        let huge = try #require(RawClient(port: running.port))
        huge.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 20_000) + "\r\n\r\n")
        #expect(await huge.readToEnd().text.hasPrefix("HTTP/1.1 413"))
        let body = try #require(RawClient(port: running.port))
        body.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        #expect(await body.readToEnd().text.hasPrefix("HTTP/1.1 413"))
        #expect(try await running.get("/healthz").body == "ok\n")
        try await running.stop()
    }

    @Test func slowClientsHoldingHalfAHeadDoNotStallTheOthers() async throws {
        // Head deadlines of an hour: with the endpoint's 10 s, a slow machine could time the
        // first clients out before the last one has connected, and the count below never holds.
        var limits = StatusEndpoint.limits
        limits.headTimeout = .seconds(3600)
        limits.idleTimeout = .seconds(3600)
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()), limits: limits)
        let server = try #require(running.endpoint.httpServer)
        // 100 clients each send half a request line and then nothing; they are all still
        // waiting when the others are served.
        var slow: [RawClient] = []
        for _ in 0..<100 {
            let client = try #require(RawClient(port: running.port))
            client.send("GET /met")
            slow.append(client)
        }
        await server.waitUntil { $0.connections.filter { $0 == .head }.count == 100 }
        for path in ["/healthz", "/metrics", "/status", "/"] {
            #expect(try await running.get(path).status == 200, "\(path) while 100 clients dribble")
        }
        try await running.stop()
        for client in slow { #expect(await client.readToEnd().closed) }
    }

    @Test func twoHundredLiveClientsAllGetEveryEventAndStuckOnesStayBounded() async throws {
        Self.raiseDescriptorLimit()
        let bus = EventBus()
        let bound = 32 * 1024
        let running = try await RunningEndpoint.start(StatusSources(bus: bus), streamBuffer: bound)
        let server = try #require(running.endpoint.httpServer)
        var readers: [EventStreamClient] = []
        for _ in 0..<200 {
            let client = try #require(EventStreamClient(port: running.port, query: "topic=test.load", keep: false))
            readers.append(client)
        }
        for reader in readers { #expect(await reader.waitUntilOpen()) }
        // And 5 that never read, on a topic of big events that fills their buffers sooner.
        var stuck: [EventStreamClient] = []
        for _ in 0..<5 { stuck.append(try #require(EventStreamClient(port: running.port, query: "topic=test.big", reading: false))) }
        await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 205 }

        // Rounds of 10 events of 1 KiB for the readers, each taken before the next round (a round
        // stays well under half the bound: what a reader's thread is still writing counts beside
        // what fills), and 25 of 8 KiB for the stuck clients, until these are dropped (their
        // socket buffers full, then their bound). Nothing the endpoint holds for its clients
        // passes their bounds.
        let word = String(repeating: "w", count: 1024)
        let big = String(repeating: "b", count: 8 * 1024)
        var published = 0
        var rounds = 0
        var mostBuffered = 0
        while running.endpoint.streamCounts.dropped < 5, rounds < 2000 {
            rounds += 1
            for n in 0..<25 {
                if n < 10 {
                    published += 1
                    try bus.post(Word(topic: "test.load", n: published, word: word))
                }
                try bus.post(Word(topic: "test.big", n: n, word: big))
            }
            for reader in readers { #expect(await reader.waitForMessages(published), "a reading client fell behind or was dropped") }
            let counts = running.endpoint.streamCounts
            mostBuffered = max(mostBuffered, counts.bufferedBytes)
            #expect(counts.bufferedBytes <= counts.clients * bound)
            #expect(counts.largestClientBytes <= bound)
            // The endpoint answers while streaming to everyone.
            if rounds % 20 == 0 { #expect(try await running.get("/healthz").status == 200) }
        }
        await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 200 }
        let counts = running.endpoint.streamCounts
        #expect(counts.clients == 200)
        #expect(counts.dropped == 5)
        #expect(mostBuffered <= 205 * bound)
        #expect(counts.peakClientBytes <= bound)
        #expect(readers.allSatisfy { $0.count == published })
        #expect(bus.stats().subscription(named: "status.events")?.dropped == 0, "the hub kept up with the bus")
        try await running.stop()
    }
}
