import Foundation
import Testing
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct RunCommandTests {
    static let herald = BuiltProducts.url(of: "herald")
    static let loaders = ["fediverse", "home", "itmedia", "images", "news", "todos"]

    /// A copy of the shipped config.json in a fresh directory, so state files start empty.
    func freshDemo() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("config.json")
        // The status endpoint on a free port: runs of the suite (and other daemons) go on side by side.
        let shipped = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("config.json"), encoding: .utf8)
        let freePort = shipped.replacingOccurrences(of: #""listen": "127.0.0.1:8420""#, with: #""listen": "127.0.0.1:0""#)
        #expect(freePort != shipped, "the shipped config no longer listens on 127.0.0.1:8420")
        try freePort.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// ``freshDemo()`` with every loader due again only after an hour, and no new todo meanwhile:
    /// a test that signals the run once each loader logged its first load then finds nothing
    /// logged after "herald: stopping", however late the signal arrives on a slow machine.
    func quietDemo() throws -> URL {
        let file = try freshDemo()
        var text = try String(contentsOf: file, encoding: .utf8)
        for every in ["30s", "2m", "5m", "20s", "1m"] {
            text = text.replacingOccurrences(of: "\"every\": \"\(every)\"", with: "\"every\": \"1h\"")
        }
        text = text.replacingOccurrences(of: "\"todoInterval\": \"15s\"", with: "\"todoInterval\": \"1h\"")
        #expect(text.components(separatedBy: "\"1h\"").count == 8, "the shipped config's intervals changed")
        try Data(text.utf8).write(to: file)
        return file
    }

    /// Every loader logged its first load, and the five webhook deliveries of the news feed's
    /// first items are done (so nothing is left to log after a signal).
    static func loggedAllLoaders(_ text: String) -> Bool {
        loaders.allSatisfy { text.contains("loader.\($0).finished") }
            && text.components(separatedBy: "post.news-hook.sent").count - 1 >= 5
    }

    @Test(.timeLimit(.minutes(5)))
    func runForThreeSecondsStopsOnItsOwnWithExit0() async throws {
        let herald = try #require(Self.herald)
        let config = try freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let start = ContinuousClock.now
        let result = try #require(try await ChildProcess.run(herald, ["run", "--config", config.path, "--for", "3s"]))
        let elapsed = ContinuousClock.now - start

        #expect(result.status == 0)
        #expect(elapsed >= .seconds(3), "--for 3s ran for \(elapsed)")   // a lower bound only: machines may be slow
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("herald: sandbox at http://127.0.0.1:") == true)
        #expect(lines.contains("herald: running 6 loaders (fediverse, home, images, itmedia, news, todos); Ctrl-C to stop"))
        // What the loads did in the 3 s depends on the machine's speed (a load still running is
        // cancelled): the signal test below waits for them and checks what they logged and saved.
        #expect(lines.last?.hasPrefix("herald: stopped") == true, "\(lines.suffix(3))")
        #expect(!result.stderr.contains("sandbox-token-secret") && !result.stderr.contains("sandbox-secret"))
    }

    @Test(.timeLimit(.minutes(5)), arguments: [SIGTERM, SIGINT])
    func aSignalStopsTheRunCleanlyWithExit0(signal: Int32) async throws {
        let herald = try #require(Self.herald)
        let config = try quietDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await child.waitForStandardError { Self.loggedAllLoaders($0) })

        child.signal(signal)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        #expect(result.stderr.hasSuffix("herald: stopping\nherald: stopped\n"))
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasSuffix("INFO    loader.home.finished  home: 20 statuses, 20 new") })
        #expect(lines.contains { $0.contains("INFO    loader.itmedia.finished  itmedia: ") })
        #expect(lines.contains { $0.hasSuffix("INFO    loader.images.finished  images: 5 images, 5 new") })
        #expect(lines.contains { $0.contains("INFO    loader.todos.finished  todos: ") })
        #expect(lines.contains { $0.contains("INFO    loader.fediverse.finished  fediverse: ") })
        #expect(lines.contains { $0.hasSuffix("INFO    loader.news.finished  news: 5 items, 5 new") })
        #expect(!result.stderr.contains("sandbox-token-secret") && !result.stderr.contains("sandbox-secret"))
        let state = config.deletingLastPathComponent().appendingPathComponent("var/state")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).sorted()
                == ["fediverse.json", "home.json", "images.json", "itmedia.json", "news.json", "outbox", "todos.json"])
    }

    /// The shipped config's Mastodon post rule, `todo-toot`, posts the new todos as toots on the
    /// sandbox, as its twitter twin `todo-tweet` does. The sandbox starts with no todos and adds
    /// one per `todoInterval`: both that and the todo loader's `every` are made a second here.
    @Test(.timeLimit(.minutes(5)))
    func theShippedMastodonPostRuleTootsTheNewTodos() async throws {
        let herald = try #require(Self.herald)
        let config = try freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let shipped = try String(contentsOf: config, encoding: .utf8)
        #expect(shipped.contains(#""todo-toot":  {"on": "loader.todos.finished", "for": "new", "service": "mastodon""#),
                "the shipped config's Mastodon rule changed")
        let faster = shipped
            .replacingOccurrences(of: #""todoInterval": "15s""#, with: #""todoInterval": "1s""#)
            .replacingOccurrences(of: #""bucket": "todos", "every": "20s""#, with: #""bucket": "todos", "every": "1s""#)
        #expect(faster.components(separatedBy: #""1s""#).count == 3, "the shipped config's todo intervals changed")
        try Data(faster.utf8).write(to: config)
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await child.waitForStandardError { $0.contains("INFO    post.todo-toot.sent") }, "stderr: \(child.stderr)")
        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        let lines = result.stderr.split(separator: "\n")
        // "todo-toot: sent <status id> via mastodon (1 attempt, key todo-toot:item:loader.todos:<todo id>)"
        let toots = lines.filter { $0.contains("INFO    post.todo-toot.sent") }
        #expect(!toots.isEmpty && toots.allSatisfy { $0.contains("todo-toot: sent ") && $0.contains(" via mastodon (1 attempt, key todo-toot:item:loader.todos:") },
                "\(toots)")
        #expect(lines.contains { $0.contains("INFO    loader.todos.finished  todos: ") && !$0.hasSuffix(" 0 new") })
        #expect(!result.stderr.contains("post.todo-toot.failed"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("sandbox-mastodon-token"))
    }

    /// `timeout` and other wrappers may signal the process and its group: one request to stop.
    @Test(.timeLimit(.minutes(5)))
    func twoSignalsAtOnceStillStopCleanlyWithExit0() async throws {
        let herald = try #require(Self.herald)
        let config = try quietDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await child.waitForStandardError { Self.loggedAllLoaders($0) })
        child.signal(SIGTERM)
        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        #expect(result.stderr.hasSuffix("herald: stopping\nherald: stopped\n"))
    }

    @Test(.timeLimit(.minutes(5)))
    func aSignalDuringSlowLoadsCancelsThemInsteadOfWaiting() async throws {
        let herald = try #require(Self.herald)
        let config = try freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let text = try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "\"0ms\"", with: "\"1h\"")
        try Data(text.utf8).write(to: config)
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await child.waitForStandardError { $0.contains("herald: running 6 loaders") })

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        // The loads wait an hour for their answers: none finished, so the signal cut them short
        // rather than waiting them out (no timing needed to tell). With 20 s, a load once
        // finished before the signal arrived, under the thread sanitizer on a loaded machine.
        #expect(!result.stderr.contains(".finished"))
        #expect(result.stderr.hasSuffix("herald: stopped\n"))
    }

    @Test(.timeLimit(.minutes(5)))
    func anInvalidConfigDoesNotStartAnything() async throws {
        let herald = try #require(Self.herald)
        let config = try freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let text = try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "\"json\", \"every\": \"30s\"", with: "\"json\", \"every\": \"30x\"")
        try Data(text.utf8).write(to: config)
        let result = try #require(try await ChildProcess.run(herald, ["run", "--config", config.path]))
        #expect(result.status == 2)
        #expect(result.stderr == """
            herald: \(config.path) is invalid (1 error):
              loaders.home.every: "30x" is not a duration

            """)
        #expect(!FileManager.default.fileExists(atPath: config.deletingLastPathComponent().appendingPathComponent("var").path))
    }

    @Test(.timeLimit(.minutes(5)))
    func sandboxCommandPrintsItsURLAndStopsOnSIGTERM() async throws {
        let herald = try #require(Self.herald)
        let child = try ChildProcess(herald, ["sandbox", "--port", "0", "--config", BuiltProducts.packageRoot.appendingPathComponent("config.json").path])
        let out = child
        #expect(await out.waitForStandardOutput { $0.contains("baas: tenant demo") })
        let line = child.stdout.split(separator: "\n").first { $0.hasPrefix("sandbox listening on http://127.0.0.1:") }
        #expect(line != nil)
        child.signal(SIGTERM)
        let result = await child.finish()
        #expect(result?.status == 0, "running: \(child.isRunning) stdout: \(child.stdout) stderr: \(child.stderr)")
        #expect(result?.stdout.hasSuffix("sandbox stopped\n") == true)
    }
}
