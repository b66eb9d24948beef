import Foundation
import HeraldRuntime
import HeraldSandbox
import HeraldSubscribers
import HeraldTesting
import Synchronization
import HeraldTestSupport
import Testing
import HeraldSync

/// Collects lines and lets a test await a condition on them, without sleeping.
final class WatchedWriter: LogWriter {
    private let state = SyncLock<(lines: [String], waiters: [CheckedContinuation<Void, Never>])>(([], []))

    func write(_ lines: [String]) async { record(lines) }

    /// Records lines at once (for callers that cannot await).
    func record(_ lines: [String]) {
        let waiters = state.withLock { state in
            state.lines.append(contentsOf: lines)
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    var lines: [String] { state.withLock { $0.lines } }

    /// Waits until `condition` holds on the lines; the test's time limit bounds it.
    func wait(until condition: @escaping @Sendable ([String]) -> Bool) async {
        while !condition(lines) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if condition(state.lines) { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

@Suite struct DaemonTests {
    /// The sandbox's time in these tests: fixed, so its timeline does not grow between loads
    /// however slow the machine is.
    static let fixedNow: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_780_000_000) }
    /// How long the tests' daemons may drain at shutdown: the drain runs on real time, and the
    /// tests expect it to finish (`drained`), however slow the machine.
    static let drainTimeout: Duration = .seconds(3600)

    /// A daemon on the continuous clock whose embedded sandbox runs at ``fixedNow``.
    static func daemon(_ configuration: HeraldConfiguration, writer: WatchedWriter) -> HeraldDaemon {
        HeraldDaemon(configuration: configuration, makeWriter: { _ in writer }, drainTimeout: drainTimeout, clock: ContinuousClock(), now: fixedNow)
    }

    static func demo(state: URL) throws -> HeraldConfiguration {
        var object = ConfigFixtures.demo
        object["state"] = state.path
        let data = try JSONSerialization.data(withJSONObject: object)
        return try ConfigLoader(environment: [:]).parse(data, baseDirectory: state)
    }

    @Test(.timeLimit(.minutes(5)))
    func theDemoLogsAllFourLoadersAndStopsCleanlyWhenCancelled() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-daemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let writer = WatchedWriter()
        let daemon = Self.daemon(try Self.demo(state: state), writer: writer)
        let started = SyncLock<DaemonStarted?>(nil)
        let run = Task { try await daemon.run { info in started.withLock { $0 = info } } }

        let loaders = ["home", "itmedia", "images", "todos"]
        await writer.wait { lines in loaders.allSatisfy { id in lines.contains { $0.contains("loader.\(id).finished") } } }
        run.cancel()
        let stopped = try await run.value

        #expect(stopped.drained)
        #expect(started.withLock { $0?.loaders } == ["home", "images", "itmedia", "todos"])
        #expect(started.withLock { $0?.sandboxURL } != nil)
        #expect(writer.lines.contains { $0.hasSuffix("home: 20 statuses, 20 new") })
        let files = try FileManager.default.contentsOfDirectory(atPath: state.path).sorted()
        #expect(files == ["home.json", "images.json", "itmedia.json", "todos.json"])
    }

    @Test(.timeLimit(.minutes(5)))
    func aFileSubscriberArchivesEveryLoadAsJSONLines() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-archive-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let archive = state.appendingPathComponent("archive/events.jsonl")
        var object = ConfigFixtures.demo
        object["state"] = state.path
        var subscribers = object["subscribers"] as? [String: Any] ?? [:]
        subscribers["archive"] = ["kind": "file", "topics": ["loader.>"], "path": archive.path, "durability": "always"] as [String: Any]
        object["subscribers"] = subscribers
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: state)
        let writer = WatchedWriter()
        let daemon = Self.daemon(configuration, writer: writer)
        let run = Task { try await daemon.run() }
        let loaders = ["home", "itmedia", "images", "todos"]
        await writer.wait { lines in loaders.allSatisfy { id in lines.contains { $0.contains("loader.\(id).finished") } } }
        run.cancel()
        _ = try await run.value

        let lines = try String(contentsOf: archive, encoding: .utf8).split(separator: "\n")
        let topics = try lines.map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["seq"] is Int && object["event"] is [String: Any] && object["correlation"] is String)
            return try #require(object["topic"] as? String)
        }
        #expect(Set(loaders.map { "loader.\($0).finished" }).isSubset(of: Set(topics)))
        let mode = try FileManager.default.attributesOfItem(atPath: archive.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test(.timeLimit(.minutes(5)))
    func aSecondRunDoesNotReannounceTheTimeline() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-daemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        // The second run asks for what is newer than the first run's newest (since_id): nothing.
        for expected in ["home: 20 statuses, 20 new", "home: 0 statuses, 0 new"] {
            let writer = WatchedWriter()
            let daemon = Self.daemon(try Self.demo(state: state), writer: writer)
            let run = Task { try await daemon.run() }
            await writer.wait { $0.contains { $0.contains("loader.home.finished") } }
            run.cancel()
            _ = try await run.value
            #expect(writer.lines.contains { $0.hasSuffix(expected) }, "\(writer.lines)")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func theStatusEndpointReportsEveryLoaderAndIsReadyOnceStarted() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-daemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        var configuration = try Self.demo(state: state)
        configuration.http = HTTPSettings(port: 0)
        let writer = WatchedWriter()
        let started = SyncLock<DaemonStarted?>(nil)
        let daemon = Self.daemon(configuration, writer: writer)
        let run = Task { try await daemon.run { info in started.withLock { $0 = info } } }
        let loaders = ["home", "itmedia", "images", "todos"]
        await writer.wait { lines in loaders.allSatisfy { id in lines.contains { $0.contains("loader.\(id).finished") } } }
        let url = try #require(started.withLock { $0?.statusURL })
        #expect(url.absoluteString.hasPrefix("http://127.0.0.1:"))

        let ready = try await Curl.run(["-i", url.absoluteString + "readyz"])
        #expect(ready.stdout.hasPrefix("HTTP/1.1 200 OK"))
        let status = try await Curl.run([url.absoluteString + "status"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let reported = (object["loaders"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(reported == loaders.sorted())
        #expect(object["ready"] as? Bool == true)
        run.cancel()
        _ = try await run.value
    }

    @Test func aStatusPortInUseIsARuntimeFailureNamingTheEndpoint() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-daemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let occupant = try await Sandbox.start()
        var configuration = try Self.demo(state: state)
        configuration.http = HTTPSettings(port: occupant.port)
        let daemon = HeraldDaemon(configuration: configuration, makeWriter: { _ in InMemoryLogWriter() })
        do {
            try await daemon.run(for: .milliseconds(10))
            Issue.record("the daemon ran on a taken port")
        } catch {
            #expect(error.description.contains("http: cannot listen on 127.0.0.1:\(occupant.port)"), "\(error)")
        }
        await occupant.stop()
    }

    @Test func aPortInUseIsARuntimeFailure() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-daemon-\(UUID().uuidString)")
        let occupant = try await Sandbox.start()
        var configuration = try Self.demo(state: state)
        configuration.sandbox.port = occupant.port
        let daemon = HeraldDaemon(configuration: configuration, makeWriter: { _ in InMemoryLogWriter() })
        await #expect(throws: DaemonError.self) { try await daemon.run(for: .milliseconds(10)) }
        await occupant.stop()
    }
}

@Suite struct DaemonOnVirtualTimeTests {
    @Test(.timeLimit(.minutes(5)))
    func theDemoSchedulesRunOnTheInjectedClock() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-virtual-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let writer = WatchedWriter()
        let clock = ManualClock()
        // The sandbox's time follows the manual clock too.
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let daemon = HeraldDaemon(configuration: try DaemonTests.demo(state: state), makeWriter: { _ in writer }, drainTimeout: DaemonTests.drainTimeout,
                                  clock: clock, now: { start.addingTimeInterval(Double(clock.now.offset.components.seconds)) })
        let run = Task { try await daemon.run(for: .seconds(65)) }

        @Sendable func count(_ id: String) -> @Sendable ([String]) -> Int {
            { lines in lines.filter { $0.contains("loader.\(id).finished") }.count }
        }
        // At start: one load each.
        await writer.wait { lines in ["home", "itmedia", "images", "todos"].allSatisfy { count($0)(lines) == 1 } }
        // Step from deadline to deadline (four schedules and the run's own timer); all five
        // sleeping again means the woken loads are done.
        var ticks: [Duration] = []
        while true {
            await clock.waitForSleepers(5)
            guard let next = clock.nextDeadline, next.offset < .seconds(65) else { break }
            ticks.append(next.offset)
            clock.advanceToNextDeadline()
        }
        clock.advance(by: clock.now.duration(to: ManualClock.Instant(offset: .seconds(65))))
        let stopped = try await run.value

        #expect(stopped.drained)
        #expect(ticks == [20, 30, 40, 60].map { Duration.seconds($0) })
        let lines = writer.lines
        #expect(count("todos")(lines) == 4)
        #expect(count("home")(lines) == 3)
        #expect(count("itmedia")(lines) == 1)
        #expect(count("images")(lines) == 1)
    }
}
