import Foundation
import Herald
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import HeraldTestSupport
import Testing

@Suite struct LogSubscriberTests {
    static let user = TwitterUser(id: "1", name: "Bot", screenName: "bot")
    static func status(_ id: String) -> Status {
        Status(id: id, createdAt: Date(timeIntervalSince1970: 0), text: "hello \(id)", user: user)
    }

    func logged(format: LogFormat = .text, level: LogLevel = .info, patterns: [TopicPattern] = [.all],
                secrets: [String] = [], _ publish: (EventBus) throws -> Void) async throws -> [String] {
        let bus = EventBus(configuration: .init(clock: { Date(timeIntervalSince1970: 1_800_000_000.25) }))
        let writer = InMemoryLogWriter()
        let subscriber = LogSubscriber(patterns: patterns, level: level, format: format, writer: writer,
                                       summarizers: [LoaderEventSummaries.summarizer], redactor: Redactor(secrets: secrets))
        let running = await RunningGroup("log", subscriber.service(on: bus))
        try publish(bus)
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()
        return writer.lines
    }

    var finished: TimelineLoaded {
        TimelineLoaded(loader: "home", statuses: (1...20).map { Self.status("\($0)") },
                       newStatuses: (18...20).map { Self.status("\($0)") }, rateLimitRemaining: 14)
    }

    /// One lifecycle: a second run while the first logs is refused (it would subscribe twice and
    /// log every line twice); once the first ended, the subscriber may run again.
    @Test func aSubscriberRunsOnceAtATimeAndAgainAfterItsRunEnded() async throws {
        let bus = EventBus(configuration: .init(clock: { Date(timeIntervalSince1970: 1_800_000_000.25) }))
        let writer = InMemoryLogWriter()
        let subscriber = LogSubscriber(writer: writer, summarizers: [LoaderEventSummaries.summarizer])
        let running = await RunningGroup("log", subscriber.service(on: bus))
        let second = await RunningGroup("log", subscriber.service(on: bus))
        let refused = await second.stop()
        guard case .failure(let error) = refused else {
            Issue.record("a second run while the first logs was not refused")
            await running.stop()
            return
        }
        #expect(error.underlying as? LogSubscriberError == LogSubscriberError(subscriber: "log"), "\(error)")
        try bus.post(finished, from: "loader.home")
        try await running.stop().get()
        let again = await RunningGroup("log", subscriber.service(on: bus))
        try bus.post(finished, from: "loader.home")
        _ = await bus.shutdown(timeout: .seconds(3_600))
        try await again.stop().get()
        #expect(writer.lines == Array(repeating: "2027-01-15T08:00:00.250Z INFO    loader.home.finished  home: 20 statuses, 3 new", count: 2))
    }

    @Test func textLinesSayWhatHappenedInOneLine() async throws {
        let lines = try await logged { bus in try bus.post(finished, from: "loader.home") }
        #expect(lines == ["2027-01-15T08:00:00.250Z INFO    loader.home.finished  home: 20 statuses, 3 new"])
    }

    @Test(arguments: [LogFormat.text, .logfmt, .json])
    func aServiceCannotForgeLogLinesOrDriveTheTerminal(format: LogFormat) async throws {
        let hostile = LoadFailed(loader: "home", kind: "timeline", error: LoadError(
            kind: "httpStatus", message: "first\nFAKE 2026-01-01T00:00:00Z INFO loader.x.finished forged\r\u{1B}[31mred\u{9B}2J\u{7F}\u{2028}",
            status: 403))
        let lines = try await logged(format: format) { bus in try bus.post(hostile, from: "loader.home") }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        // C0, DEL, C1 (an 8-bit CSI) and the line separators.
        let control = line.unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{2029}" }
        #expect(control.isEmpty, "no control character reaches the log: \(String(reflecting: line))")
        #expect(line.contains("FAKE"), "the text is kept, escaped")
        if format == .json {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            #expect(object["msg"]?.hasSuffix("red\u{9B}2J\u{7F}\u{2028}") == true, "the JSON still says what the service said")
        }
    }

    @Test func logfmtCarriesFields() async throws {
        let lines = try await logged(format: .logfmt) { bus in try bus.post(finished, from: "loader.home") }
        #expect(lines == [#"time=2027-01-15T08:00:00.250Z level=info topic=loader.home.finished sender=loader.home msg="home: 20 statuses, 3 new" loader=home statuses=20 new=3 rate_remaining=14"#])
    }

    @Test func jsonIsOneObjectPerLine() async throws {
        let lines = try await logged(format: .json) { bus in try bus.post(finished, from: "loader.home") }
        let line = try #require(lines.first)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == "home: 20 statuses, 3 new")
        #expect(object["level"] == "info")
        #expect(object["new"] == "3")
        #expect(object["sender"] == "loader.home")
    }

    @Test func levelAndTopicFiltersApply() async throws {
        let failure = LoadFailed(loader: "images", kind: "tiqav", error: LoadError(kind: "timeout", message: "timed out"))
        let todos = TodosLoaded(loader: "todos", bucket: "todos", todos: [], newTodos: [], removedIDs: [])
        let warnings = try await logged(level: .warning) { bus in
            try bus.post(finished)
            try bus.post(failure)
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasSuffix("WARNING loader.images.failed  images: load failed: timeout: timed out") == true)
        let filtered = try await logged(patterns: ["loader.todos.>"]) { bus in
            try bus.post(finished)
            try bus.post(todos)
        }
        #expect(filtered.count == 1)
        #expect(filtered.first?.hasSuffix("todos: 0 todos, 0 new") == true)
    }

    @Test func rateLimitsShowTheirReset() async throws {
        let reset = Date(timeIntervalSince1970: 1_800_000_900)
        let failure = LoadFailed(loader: "home", kind: "timeline",
                                 error: LoadError(kind: "rateLimited", message: "Rate limit exceeded", status: 429, codes: [88], retryAt: reset))
        let lines = try await logged { bus in try bus.post(failure) }
        #expect(lines.first?.hasSuffix("home: load failed: rateLimited 429: Rate limit exceeded (resets 2027-01-15T08:15:00Z)") == true)
    }

    @Test func secretsAreNeverPrinted() async throws {
        let leaky = LoadFailed(loader: "home", kind: "timeline", error: LoadError(
            kind: "transport", message: #"refused: oauth_signature="abc%3D", oauth_token="1-tok" key sandbox-token-secret"#))
        let lines = try await logged(secrets: ["sandbox-token-secret"]) { bus in try bus.post(leaky) }
        let line = try #require(lines.first)
        #expect(!line.contains("sandbox-token-secret"))
        #expect(!line.contains("abc%3D"))
        #expect(!line.contains("1-tok"))
        #expect(line.contains(#"oauth_signature="[redacted]""#))
    }

    @Test func busEventsAreSummarised() async throws {
        let lines = try await logged { bus in
            try bus.post(SubscriberFailed(subscription: "sink", subscriptionID: 3, eventTopic: "loader.home.finished",
                                          eventSequence: 9, error: "disk full"))
        }
        #expect(lines.first?.hasSuffix("ERROR   bus.subscriber.failed  subscriber sink failed on loader.home.finished: disk full") == true)
    }

    @Test func stateFilesSetAsideAreWarnings() async throws {
        let lines = try await logged { bus in
            try bus.post(LoaderStateSetAside(loader: "home", path: "/s/home.json", movedTo: "/s/home.json.corrupt-1", reason: "not JSON"))
        }
        #expect(lines.first?.hasSuffix("home: state file /s/home.json is unreadable (not JSON); moved to /s/home.json.corrupt-1") == true)
    }

    @Test func fileWriterAppendsWholeLines() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-log-\(UUID().uuidString)/herald.log").path
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        await (try FileHandleLogWriter.appending(toFile: path)).write("one")
        await (try FileHandleLogWriter.appending(toFile: path)).write(["two", "three"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\nthree\n")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
