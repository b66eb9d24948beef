import Foundation
import Herald
import HeraldSubscribers
import HeraldTestSupport
import Testing

@testable import HeraldStatus
import HeraldTesting

/// `GET /events`: one SSE message per event, `id:` its sequence number and `data:` the archive's
/// JSON object; `?topic=` filters; a client that does not read is dropped, visibly, without
/// slowing the bus or the other clients.
@Suite(.timeLimit(.minutes(5))) struct EventStreamTests {
    @Test func eachEventIsOneMessageWithItsSequenceAndTheArchivesJSON() async throws {
        let bus = EventBus()
        let recorder = EventRecorder()
        let recording = try bus.subscribe(matching: "test.>") { recorder.record($0) }
        defer { recording.cancel() }
        let running = try await RunningEndpoint.start(StatusSources(bus: bus))
        let client = try #require(EventStreamClient(port: running.port))
        #expect(await client.waitUntilOpen())
        #expect(client.head.hasPrefix("HTTP/1.1 200 OK"))
        #expect(client.head.contains("Content-Type: text/event-stream"))

        try bus.post(Ping(topic: "test.one", n: 1), from: "tests")
        try bus.post(Word(topic: "test.two", n: 2, word: "line\nbreak \"quoted\" ✓"))
        #expect(await client.waitForMessages(2))
        var encoder = EnvelopeLineEncoder()
        let expected = try recorder.envelopes.map { envelope in
            EventStreamClient.Message(id: String(envelope.sequence),
                                      data: String(decoding: try encoder.line(for: envelope).dropLast(), as: UTF8.self))
        }
        #expect(client.messages == expected)
        // The data is one line of JSON (a newline in the event is escaped), the archive's object.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(client.messages[1].data.utf8)) as? [String: Any])
        #expect((object["event"] as? [String: Any])?["word"] as? String == "line\nbreak \"quoted\" ✓")
        #expect(object["topic"] as? String == "test.two")
        try await running.stop()
        #expect(await client.wait { _, _ in false } == false, "the stream closes when the endpoint stops")
    }

    @Test func repeatableTopicFiltersChooseTheEvents() async throws {
        let bus = EventBus()
        let running = try await RunningEndpoint.start(StatusSources(bus: bus))
        let client = try #require(EventStreamClient(port: running.port, query: "topic=a.%3E&topic=b.*.done"))
        let all = try #require(EventStreamClient(port: running.port))
        #expect(await client.waitUntilOpen())
        #expect(await all.waitUntilOpen())
        for topic in ["a.x", "b.one.done", "b.one.two.done", "c.x", "a.y.z", "b.two.failed"] {
            try bus.post(Ping(topic: Topic(stringLiteral: topic), n: 0))
        }
        #expect(await all.waitForMessages(6))
        try bus.post(Ping(topic: "a.last", n: 1))
        #expect(await client.waitForMessages(4))
        let topics = try client.messages.map { message in
            try #require(try JSONSerialization.jsonObject(with: Data(message.data.utf8)) as? [String: Any])["topic"] as? String
        }
        #expect(topics == ["a.x", "b.one.done", "a.y.z", "a.last"])
        try await running.stop()
    }

    @Test func aHeadOfEventsOrAClientGoneBeforeItsHeadLeavesNoClientBehind() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        let head = try await running.get("/events", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.headers.contains("Content-Type: text/event-stream"))
        await running.endpoint.httpServer?.waitUntil { $0.connections.isEmpty }
        #expect(running.endpoint.streamCounts.clients == 0)
        try await running.stop()
    }

    @Test func anInvalidTopicPatternIs400() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        let answer = try await running.get("/events?topic=a..b")
        #expect(answer.status == 400)
        #expect(answer.body.contains("topic=a..b"))
        try await running.stop()
    }

    @Test func aClientThatDoesNotReadIsDroppedVisiblyAndTheOthersGetEveryEvent() async throws {
        let bus = EventBus()
        let recorder = EventRecorder()
        let recording = try bus.subscribe(matching: "status.>") { recorder.record($0) }
        defer { recording.cancel() }
        let running = try await RunningEndpoint.start(StatusSources(bus: bus), streamBuffer: 64 * 1024)
        let stuck = try #require(EventStreamClient(port: running.port, query: "topic=test.>", reading: false))
        let reader = try #require(EventStreamClient(port: running.port, query: "topic=test.>", keep: false))
        #expect(await reader.waitUntilOpen())
        let server = try #require(running.endpoint.httpServer)
        await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 2 }

        // Rounds of 8 events of 4 KiB: the reader takes each round before the next, so only the
        // stuck client falls behind; its socket buffers fill, then its 64 KiB bound. A round
        // stays well under the bound (16 of them, framing included, went over it: the reader
        // was dropped whenever its connection's thread did not write during a round's fan-out,
        // as on a busy machine).
        let text = String(repeating: "x", count: 4096)
        var published = 0
        while !recorder.topics.contains("status.events.dropped"), published < 100_000 {
            for _ in 0..<8 {
                published += 1
                try bus.post(Word(topic: "test.big", n: published, word: text))
            }
            #expect(await reader.waitForMessages(published), "the reading client was dropped too")
        }
        let dropped = try #require(recorder.envelopes.compactMap { $0.event as? StatusStreamDropped }.first)
        #expect(dropped.filters == ["test.>"])
        #expect(dropped.limit == 64 * 1024)
        #expect(dropped.bufferedBytes > 60 * 1024)
        #expect(running.endpoint.streamClients == 1)
        let metrics = samples(try await running.get("/metrics").body)
        #expect(metrics["herald_status_stream_dropped_clients_total"] == 1)
        #expect(metrics["herald_status_stream_clients"] == 1)
        // The stuck client's connection is gone; the reader goes on.
        await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 1 }
        try bus.post(Word(topic: "test.big", n: published + 1, word: "after"))
        #expect(await reader.waitForMessages(published + 1))
        _ = stuck
        try await running.stop()
    }

    /// Issue 17 #7: the bytes one client holds are the buffer its connection's thread is writing
    /// and the one filling behind it, together; waves of clients that never read must never make
    /// any of them hold more than the bound.
    @Test func noClientEverHoldsMoreThanItsBoundCountingTheBufferBeingWritten() async throws {
        let bus = EventBus()
        let bound = 64 * 1024
        let running = try await RunningEndpoint.start(StatusSources(bus: bus), streamBuffer: bound)
        let server = try #require(running.endpoint.httpServer)
        let reader = try #require(EventStreamClient(port: running.port, query: "topic=test.>", keep: false))
        #expect(await reader.waitUntilOpen())
        // Rounds of 4 events of 4 KiB: two rounds (one being written, one filling) stay well
        // under the bound, so only the clients that do not read fall behind.
        let text = String(repeating: "x", count: 4096)
        var published = 0
        for wave in 1...3 {
            var stuck: [EventStreamClient] = []
            for _ in 0..<8 { stuck.append(try #require(EventStreamClient(port: running.port, query: "topic=test.>", reading: false))) }
            await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 9 }
            var rounds = 0
            while running.endpoint.streamCounts.dropped < wave * 8, rounds < 10_000 {
                rounds += 1
                for _ in 0..<4 {
                    published += 1
                    try bus.post(Word(topic: "test.big", n: published, word: text))
                }
                #expect(await reader.waitForMessages(published), "the reading client was dropped")
                let counts = running.endpoint.streamCounts
                #expect(counts.largestClientBytes <= bound, "a client holds \(counts.largestClientBytes) bytes; the bound is \(bound)")
            }
            #expect(running.endpoint.streamCounts.dropped == wave * 8)
            await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 1 }
            _ = stuck
        }
        let counts = running.endpoint.streamCounts
        #expect(counts.peakClientBytes <= bound, "a client held \(counts.peakClientBytes) bytes; the bound is \(bound)")
        #expect(counts.peakClientBytes > bound / 2, "the clients that did not read filled up")
        #expect(counts.clients == 1)
        try await running.stop()
    }

    /// Issue 17 #8: streams have a limit of their own below the connection limit, so probes
    /// always find a connection; a stream beyond it is a 503 with Retry-After.
    @Test func streamsBeyondTheirLimitAre503AndProbesAreStillServed() async throws {
        let bus = EventBus()
        let sources = StatusSources(bus: bus)
        sources.markReady()
        var limits = StatusEndpoint.limits
        limits.maxConnections = 8
        limits.maxStreams = 3
        let running = try await RunningEndpoint.start(sources, limits: limits)
        let server = try #require(running.endpoint.httpServer)
        var streams: [EventStreamClient] = []
        for _ in 0..<3 {
            let client = try #require(EventStreamClient(port: running.port))
            #expect(await client.waitUntilOpen())
            streams.append(client)
        }
        // Five more streams (without a limit of their own they would take every connection),
        // each answered 503 at once: none of them keeps a connection.
        for _ in 0..<5 {
            let refused = try #require(RawClient(port: running.port))
            refused.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            // The head and what follows it: a refusal's JSON, or (were it served) a stream's first comment.
            let answer = await refused.receive { $0.contains("\r\n\r\n") && ($0.hasSuffix("}") || $0.contains(": herald events")) }
            #expect(answer.text.hasPrefix("HTTP/1.1 503 Service Unavailable"), "got \(answer.text.prefix(200).debugDescription)")
            #expect(answer.text.contains("Retry-After: "))
            #expect(answer.text.contains("at most 3"), "the refusal names the limit: \(answer.text.debugDescription)")
            if answer.text.hasPrefix("HTTP/1.1 503") { #expect(await refused.readToEnd().closed) }
        }
        await server.waitUntil { $0.connections.count == 3 }
        // Probes are served while the streams stay, several at once (two held open here).
        let held = try #require(RawClient(port: running.port))
        held.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await held.read { $0.hasSuffix("ok\n") }.hasPrefix("HTTP/1.1 200 OK"))
        for path in ["/healthz", "/readyz", "/metrics", "/status", "/"] {
            #expect(try await running.get(path).status == 200, "\(path) while the streams are open")
        }
        #expect(running.endpoint.streamCounts.clients == 3)
        // A stream ending frees its place for the next.
        streams.removeFirst().shutdown()
        await server.waitUntil { $0.connections.filter { $0 == .streaming }.count == 2 }
        let next = try #require(EventStreamClient(port: running.port))
        #expect(await next.waitUntilOpen())
        try bus.post(Ping(topic: "test.after", n: 1))
        #expect(await next.waitForMessages(1))
        try await running.stop()
    }

    /// Issue 17 #9: a client names at most 32 patterns; more is a 400 that says so.
    @Test func moreThanThe32PatternsOfAClientIs400NamingTheBound() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        func head(patterns: Int) async throws -> String {
            let client = try #require(RawClient(port: running.port))
            let query = (0..<patterns).map { "topic=p.\($0).>" }.joined(separator: "&")
            client.send("GET /events?\(query) HTTP/1.1\r\nHost: x\r\n\r\n")
            return await client.read { $0.contains("\r\n\r\n") }
        }
        #expect(try await head(patterns: 32).hasPrefix("HTTP/1.1 200 OK"))
        let refused = try await head(patterns: 33)
        #expect(refused.hasPrefix("HTTP/1.1 400 Bad Request"), "got \(refused.prefix(200).debugDescription)")
        let answer = try await running.get("/events?" + (0..<33).map { "topic=p.\($0)" }.joined(separator: "&"))
        #expect(answer.status == 400)
        #expect(answer.body.contains("33 topic patterns; at most 32"), "got \(answer.body)")
        try await running.stop()
    }

    /// Issue 17 #9: clients' patterns are routed through a trie of all of them (the bus's
    /// own), not matched client by client: patterns waiting on other topics cost an event
    /// nothing, as the count of routing steps (trie nodes visited) shows.
    @Test func patternsOfOtherTopicsCostAnEventNoRoutingSteps() async throws {
        let bus = EventBus()
        let running = try await RunningEndpoint.start(StatusSources(bus: bus))
        var idle: [EventStreamClient] = []
        for client in 0..<20 {
            let query = (0..<32).map { "topic=nothing.\(client).\($0).>" }.joined(separator: "&")
            idle.append(try #require(EventStreamClient(port: running.port, query: query)))
        }
        let reader = try #require(EventStreamClient(port: running.port, query: "topic=test.hit&topic=test.*"))
        for client in idle + [reader] { #expect(await client.waitUntilOpen()) }
        let before = running.endpoint.streamRoutingSteps
        for n in 1...100 { try bus.post(Ping(topic: "test.hit", n: n)) }
        #expect(await reader.waitForMessages(100))
        let steps = running.endpoint.streamRoutingSteps - before
        // 641 patterns; an event on test.hit visits the root, test, hit and * nodes.
        #expect(steps <= 100 * 8, "\(steps) routing steps for 100 events")
        #expect(reader.messages.map(\.id) == (1...100).map(String.init), "each event once, though two patterns match it")
        #expect(idle.allSatisfy { $0.count == 0 })
        try await running.stop()
    }
}

@Suite struct StatusEventSummaryTests {
    @Test func aDroppedClientIsLoggedAsAWarning() throws {
        let envelope = Envelope<any Event>(
            topic: StatusStreamDropped.topic, sender: "status", id: EventID(bus: UUID(), sequence: 1), correlationID: EventID(bus: UUID(), sequence: 1),
            timestamp: Date(), event: StatusStreamDropped(client: 3, filters: ["loader.>"], bufferedBytes: 70_000, limit: 65_536))
        let record = try #require(StatusEventSummaries.summarizer(envelope))
        #expect(record.level == .warning)
        #expect(record.message == "/events client #3 (loader.>) dropped: it did not read, and 70000 bytes waited (bound 65536)")
    }
}
