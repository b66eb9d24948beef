import Foundation
import Herald
import HeraldLoaders
import HeraldServices
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import HeraldIO
import Testing

@testable import HeraldStatus
import HeraldTesting

/// A post service that posts, refuses or holds by the text: `fail` is refused for good, `hold`
/// waits until released.
final class ScriptedPosts: PostService {
    private struct State {
        var held: CheckedContinuation<Void, Never>?
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = SyncLock(State())

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        guard case .status(let text, _, _) = intent.content else { return "?" }
        if text.contains("fail") { throw PostServiceError("refused by the script") }
        if text.contains("hold") {
            await withCheckedContinuation { continuation in
                let watchers = state.withLock { state in
                    state.held = continuation
                    defer { state.watchers = [] }
                    return state.watchers
                }
                watchers.forEach { $0.resume() }
            }
        }
        return "id-\(text)"
    }

    /// Returns once a post is held.
    func waitUntilHolding() async {
        await withCheckedContinuation { continuation in
            let holding = state.withLock { state -> Bool in
                if state.held != nil { return true }
                state.watchers.append(continuation)
                return false
            }
            if holding { continuation.resume() }
        }
    }

    /// A post scheduler `posts` whose rule `echo` posts `template` for each `test.post` event
    /// through this service, running on `bus` (until the returned group stops) and added to `sources`.
    func scheduler(template: String, outbox directory: URL, bus: EventBus, sources: StatusSources) async throws -> RunningGroup {
        let rule = PostRule(name: "echo", on: "test.post", service: "stub", target: .status(text: try PostTemplate(template), media: nil))
        let scheduler = PostScheduler(name: "posts", rules: [rule], services: ["stub": self],
                                      outboxPath: directory.appendingPathComponent("outbox.jsonl").path, io: BlockingIOThread(name: "test.outbox"))
        let running = await RunningGroup("posts", scheduler.service(on: bus))
        sources.add(poster: scheduler)
        return running
    }

    func release() {
        state.withLock { state in
            defer { state.held = nil }
            return state.held
        }?.resume()
    }
}

/// `/metrics` and `/status` read back after known events: the numbers are the bus's, the
/// schedule's, the archive's and the post scheduler's own.
@Suite(.timeLimit(.minutes(5))) struct MetricsTests {
    static let epoch = Date(timeIntervalSince1970: 1_780_000_000)

    @Test func theNumbersAfterKnownEventsAreReadBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-metrics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = EventBus()
        let sources = StatusSources(bus: bus)
        let recorder = EventRecorder()
        let recording = try bus.subscribe(matching: .all) { recorder.record($0) }
        defer { recording.cancel() }

        // A schedule on a manual clock whose loads are scripted: 5 items (3 new), then a
        // transport failure.
        let clock = ManualClock()
        let monitor = ScheduleMonitor()
        sources.add(StatusSources.Loader(id: "home", kind: "timeline", monitor: monitor))
        let outcomes = SyncLock<[LoadOutcome]>([.finished(items: 5, new: 3), .failed(LoadError(kind: "transport", message: "refused"))])
        let schedule = LoaderSchedule(policy: SchedulePolicy(interval: .seconds(10)), clock: clock, now: { Self.epoch }, monitor: monitor) {
            outcomes.withLock { $0.isEmpty ? .finished(items: 0, new: 0) : $0.removeFirst() }
        }
        let scheduling = Task { await schedule.run() }

        // An archive of test.> and a post rule on test.post.
        let sink = FileSink(name: "archive", path: directory.appendingPathComponent("events.jsonl").path, patterns: ["test.>"],
                            durability: .none)
        let archiving = await RunningGroup("archive", sink.service(on: bus))
        sources.add(archive: sink)
        let posts = ScriptedPosts()
        let scheduler = try await posts.scheduler(template: "{{n}} {{word}}", outbox: directory, bus: bus, sources: sources)
        let running = try await RunningEndpoint.start(sources, now: { Self.epoch })

        await clock.waitForSleepers(1)  // the first load is recorded
        for n in 1...3 { try bus.post(Ping(topic: "test.one", n: n)) }
        try bus.post(Word(topic: "test.post", n: 1, word: "ok"))
        try bus.post(Word(topic: "test.post", n: 2, word: "fail"))
        await recorder.wait { $0.map(\.topic.name).contains("post.echo.sent") && $0.map(\.topic.name).contains("post.echo.failed") }
        try bus.post(Word(topic: "test.post", n: 3, word: "hold"))
        await posts.waitUntilHolding()

        var metrics = samples(try await running.get("/metrics").body)
        #expect(metrics[#"herald_events_published_total{topic="test.one"}"#] == 3)
        #expect(metrics[#"herald_events_published_total{topic="test.post"}"#] == 3)
        #expect(metrics[#"herald_loader_pulls_total{loader="home"}"#] == 1)
        #expect(metrics[#"herald_loader_new_items_total{loader="home"}"#] == 3)
        #expect(metrics[#"herald_loader_last_success_timestamp_seconds{loader="home"}"#] == 1_780_000_000)
        #expect(metrics[#"herald_loader_next_run_timestamp_seconds{loader="home"}"#] == 1_780_000_010)
        #expect(metrics[#"herald_posts_sent_total{scheduler="posts",rule="echo"}"#] == 1)
        #expect(metrics[#"herald_posts_failed_total{scheduler="posts",rule="echo"}"#] == 1)
        #expect(metrics[#"herald_post_intents_pending{scheduler="posts"}"#] == 1)
        #expect(metrics[#"herald_post_intents_held{scheduler="posts"}"#] == 0)
        #expect(metrics["herald_ready"] == 0)
        #expect((metrics["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((metrics["process_open_fds"] ?? 0) > 3)
        #expect(metrics["process_cpu_seconds_total"] != nil)
        let archiveID = try #require(bus.stats().subscription(named: "archive")?.id)
        let archiveDelivered = #"herald_subscription_delivered_total{subscription="archive",id="\#(archiveID)"}"#
        #expect(metrics[archiveDelivered] != nil)
        #expect(metrics[#"herald_subscription_queue_high_water_mark{subscription="archive",id="\#(archiveID)"}"#] != nil)

        // The second load fails: counted by kind, and the next run backs off 2 s from it.
        clock.advance(by: .seconds(10))
        await clock.waitForSleepers(1)
        sources.markReady()
        posts.release()
        await recorder.wait { $0.filter { $0.topic.name == "post.echo.sent" }.count == 2 }
        _ = await bus.shutdown(timeout: .seconds(120))  // the archive's mailbox drained
        metrics = samples(try await running.get("/metrics").body)
        #expect(metrics[#"herald_loader_pulls_total{loader="home"}"#] == 2)
        #expect(metrics[#"herald_loader_failures_total{loader="home",kind="transport"}"#] == 1)
        #expect(metrics[#"herald_loader_consecutive_failures{loader="home"}"#] == 1)
        #expect(metrics[#"herald_loader_last_success_timestamp_seconds{loader="home"}"#] == 1_780_000_000)
        #expect(metrics[#"herald_loader_next_run_timestamp_seconds{loader="home"}"#] == 1_780_000_002)
        #expect(metrics[#"herald_posts_sent_total{scheduler="posts",rule="echo"}"#] == 2)
        #expect(metrics[#"herald_post_intents_pending{scheduler="posts"}"#] == 0)
        #expect(metrics[#"herald_archive_lines_total{sink="archive"}"#] == 6)
        let archived = try Data(contentsOf: URL(fileURLWithPath: sink.path)).count
        #expect(metrics[#"herald_archive_written_bytes_total{sink="archive"}"#] == Double(archived))
        #expect(metrics[#"herald_archive_rotations_total{sink="archive"}"#] == 0)
        #expect(metrics["herald_ready"] == 1)

        // /status says the same, per loader and subscriber.
        let status = try StatusReport.decode(Data(try await running.get("/status").body.utf8))
        #expect(status.ready)
        #expect(status.loaders.map(\.id) == ["home"])
        #expect(status.loaders.first?.lastResult == "failed")
        #expect(status.loaders.first?.failures == ["transport": 1])
        #expect(status.loaders.first?.nextRun == Self.epoch.addingTimeInterval(2))
        #expect(status.archives.first?.lines == 6)
        #expect(status.posts.first?.sent == ["echo": 2])
        #expect(status.posts.first?.failed == ["echo": 1])
        #expect(status.bus.topics.first { $0.topic == "test.one" }?.published == 3)

        scheduling.cancel()
        await scheduling.value
        await scheduler.stop()
        await archiving.stop()
        try await running.stop()
    }

    @Test func unknownPathsAre404AndOtherMethods405() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        #expect(try await running.get("/nope").status == 404)
        #expect(try await running.get("/metrics/").status == 404)
        let post = try await running.get("/metrics", method: "POST")
        #expect(post.status == 405)
        #expect(post.headers.contains("Allow: GET, HEAD"))
        #expect(try await running.get("/status", method: "DELETE").status == 405)
        let head = try await running.get("/metrics", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.headers.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(try await running.get("/healthz").body == "ok\n")
        #expect(try await running.get("/readyz").status == 503)
        try await running.stop()
    }

    /// RFC 9112 on the endpoint: no Host is 400, the absolute form is served, CONNECT is 405.
    @Test func aRequestWithoutHostIs400TheAbsoluteFormIsServedAndConnectIs405() async throws {
        let running = try await RunningEndpoint.start(StatusSources(bus: EventBus()))
        let authority = "127.0.0.1:\(running.port)"
        let noHost = try #require(RawClient(port: running.port))
        noHost.send("GET /healthz HTTP/1.1\r\n\r\n")
        let refused = await noHost.readToEnd()
        #expect(refused.text.hasPrefix("HTTP/1.1 400 Bad Request"), "got \(refused.text.debugDescription)")
        #expect(refused.text.contains("Host"))

        let absolute = try #require(RawClient(port: running.port))
        absolute.send("GET http://\(authority)/status HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n")
        let status = await absolute.readToEnd().text
        #expect(status.hasPrefix("HTTP/1.1 200 OK"), "got \(status.prefix(200).debugDescription)")
        let body = try #require(status.components(separatedBy: "\r\n\r\n").last)
        #expect((try? StatusReport.decode(Data(body.utf8))) != nil)

        let connect = try #require(RawClient(port: running.port))
        connect.send("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n")
        let answer = await connect.readToEnd().text
        #expect(answer.hasPrefix("HTTP/1.1 405 Method Not Allowed"), "got \(answer.prefix(200).debugDescription)")
        #expect(answer.contains("Allow: GET, HEAD"))
        try await running.stop()
    }

    /// Issue 17 #10: topics made up elsewhere (another node, any NATS client) must not make a
    /// series each. The daemon's own topics keep theirs; 64 others get one, first come first
    /// served and kept; the rest are counted together as topic="(other)".
    @Test func topicsBeyondTheCapAreCountedTogetherAsOther() async throws {
        let bus = EventBus()
        let sources = StatusSources(bus: bus)
        sources.add(StatusSources.Loader(id: "home", kind: "timeline", monitor: ScheduleMonitor()))
        let running = try await RunningEndpoint.start(sources)
        func topicSeries() async throws -> [String: Double] {
            samples(try await running.get("/metrics").body).filter { $0.key.hasPrefix("herald_events_published_total{") }
        }
        for n in 0..<300 { try bus.post(Ping(topic: Topic(validating: "remote.first.t\(n)"), n: n)) }
        // The loader's own topic and a cluster node's own report, published after the flood,
        // still have their series.
        try bus.post(Ping(topic: LoaderTopics.topic("home", "finished"), n: 0))
        try bus.post(Ping(topic: "cluster.post.refused", n: 0))
        let first = try await topicSeries()
        #expect(first.count == 64 + 3, "got \(first.count) series")
        #expect(first[#"herald_events_published_total{topic="loader.home.finished"}"#] == 1)
        #expect(first[#"herald_events_published_total{topic="cluster.post.refused"}"#] == 1)
        let folded: Double = 300 - 64
        #expect(first[#"herald_events_published_total{topic="(other)"}"#] == folded)
        #expect(first.values.reduce(0, +) == 302)

        // More new topics: the series already made stay, the new topics go to (other).
        for n in 0..<100 { try bus.post(Ping(topic: Topic(validating: "remote.second.t\(n)"), n: n)) }
        let second = try await topicSeries()
        #expect(Set(second.keys) == Set(first.keys))
        #expect(second[#"herald_events_published_total{topic="(other)"}"#] == folded + 100)

        // /status says the same, as long.
        let report = try StatusReport.decode(Data(try await running.get("/status").body.utf8))
        #expect(report.bus.topics.count == 64 + 3)
        #expect(report.bus.topics.first { $0.topic == "(other)" }?.published == 336)
        #expect(report.bus.topics.contains { $0.topic == "loader.home.finished" })
        try await running.stop()
    }

    @Test func labelValuesAndHelpAreEscapedAsTheFormatSays() {
        #expect(PrometheusText.escapeLabel(#"a"b\c"# + "\nd") == #"a\"b\\c\nd"#)
        #expect(PrometheusText.escapeHelp("x\\y\nz") == #"x\\y\nz"#)
        var text = PrometheusText()
        text.family("t_total", .counter, "Help.")
        text.sample("t_total", ["topic": #"q"uote"#], 1.5)
        #expect(text.text == "# HELP t_total Help.\n# TYPE t_total counter\n" + #"t_total{topic="q\"uote"} 1.5"# + "\n")
        #expect(PrometheusText.format(3) == "3")
        #expect(PrometheusText.format(.nan) == "NaN")
        #expect(PrometheusText.format(-.infinity) == "-Inf")
    }

    @Test func procStatIsReadFromAfterTheCommandName() throws {
        let line = "4242 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 120 30 0 0 20 0 1 0 5000 123456789 2048 18446744073709551615"
        let fields = try #require(ProcessStatistics.parseStat(line))
        #expect(fields.userTicks == 120)
        #expect(fields.systemTicks == 30)
        #expect(fields.startTicks == 5000)
        #expect(fields.residentPages == 2048)
        #expect(ProcessStatistics.parseStat("garbage") == nil)
    }
}

/// A test event with a word for the post template.
struct Word: Event, Hashable {
    var topic: Topic
    var n: Int
    var word: String
}
