import Foundation
import Testing
import HeraldTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald run` posting against a `herald sandbox` process that outlives it: killed at each
/// point of the outbox protocol and restarted, and against scripted 5xx / 429 / dropped / 401
/// answers. The sandbox's own record (`GET /_sandbox/posts`) is the judge.
@Suite(.timeLimit(.minutes(5))) struct PostReliabilityTests {
    static let herald = BuiltProducts.url(of: "herald")
    /// `herald run` with a fault hook, built for the tests only.
    static let crashRun = BuiltProducts.url(of: "herald-crash-run")

    /// A running `herald sandbox`.
    struct SandboxProcess {
        let process: ChildProcess
        let url: URL

        static let stillConfig = """
            {"services": {"twitter": {"url": "sandbox", "auth": \(PostReliabilityTests.auth)}},
             "loaders": {"feed": {"kind": "timeline", "service": "twitter", "every": "1h"}},
             "sandbox": {"port": 0, "statusInterval": "1h"}}
            """

        /// Starts `herald sandbox` with `configText` (by default one whose timeline does not grow).
        static func start(in directory: URL, herald: URL, config configText: String = stillConfig) async throws -> SandboxProcess {
            let config = directory.appendingPathComponent("sandbox.json")
            try Data(configText.utf8).write(to: config)
            let process = try ChildProcess(herald, ["sandbox", "--config", config.path])
            let listening = await process.waitForStandardOutput { $0.contains("sandbox listening on ") && $0.contains("\n") }
            #expect(listening, "sandbox stderr: \(process.stderr)")
            let line = try #require(process.stdout.split(separator: "\n").first { $0.hasPrefix("sandbox listening on ") })
            let url = try #require(URL(string: String(line.dropFirst("sandbox listening on ".count))))
            return SandboxProcess(process: process, url: url)
        }

        /// The texts of the statuses posted so far, oldest first.
        func posts() async throws -> [String] {
            let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/posts"))
            let object = try JSONSerialization.jsonObject(with: data)
            let posts = (object as? [[String: Any]]) ?? ((object as? [String: Any])?["posts"] as? [[String: Any]]) ?? []
            return posts.compactMap { $0["text"] as? String }
        }

        /// Queues forced answers for the next `statuses/update` requests.
        func script(_ responses: String) async throws {
            var request = URLRequest(url: url.appendingPathComponent("_sandbox/faults"))
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"path": "/1.1/statuses/update.json", "responses": \#(responses)}"#.utf8)
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }

        func stop() async {
            process.signal(SIGTERM)
            _ = await process.finish(within: .seconds(30))
        }
    }

    static let auth = #"{"consumerKey": "sandbox-consumer-key", "consumerSecret": "sandbox-consumer-secret", "token": "1-sandbox-access-token", "tokenSecret": "sandbox-token-secret"}"#

    /// A daemon config: one load of @itmedia's five newest statuses, and a rule posting
    /// `Saw <id>` once per new status (its own posts never show in that timeline).
    static func daemonConfig(in directory: URL, sandbox: URL) throws -> URL {
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {"state": "var/state",
             "services": {"twitter": {"url": "\(sandbox.absoluteString)", "auth": \(auth)}},
             "loaders": {"itmedia": {"kind": "timeline", "service": "twitter", "timeline": "user", "screenName": "itmedia",
                                     "count": 5, "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"echo": {"on": "loader.itmedia.finished", "for": "new", "service": "twitter", "text": "Saw {{id_str}}"}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-posts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Lines of a run's log saying a post of rule `echo` ended: sent, duplicate, or failed.
    static func outcomes(_ stderr: String) -> (sent: Int, duplicate: Int, failed: Int) {
        let lines = stderr.split(separator: "\n")
        return (lines.filter { $0.contains("post.echo.sent") && $0.contains("echo: sent ") }.count,
                lines.filter { $0.contains("post.echo.sent") && $0.contains("already posted (duplicate)") }.count,
                lines.filter { $0.contains("post.echo.failed") }.count)
    }

    @Test(arguments: ["after-intent", "after-post"])
    func aRunKilledMidPostPostsEachItemExactlyOnceAfterRestart(crashPoint: String) async throws {
        let herald = try #require(Self.herald)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        // The first run kills itself (SIGKILL) at the crash point of its first post.
        let crashRun = try #require(Self.crashRun)
        let crashed = try ChildProcess(crashRun, [crashPoint, "--config", config.path])
        let killed = try #require(await crashed.finish(within: .seconds(60)))
        #expect([SIGKILL, 128 + SIGKILL].contains(killed.status), "stderr: \(killed.stderr)")
        let afterCrash = try await sandbox.posts()
        #expect(afterCrash.count == (crashPoint == "after-post" ? 1 : 0))
        let journal = try String(contentsOf: directory.appendingPathComponent("var/state/outbox/posts.jsonl"), encoding: .utf8)
        #expect(journal.contains(#""op":"intent""#) && !journal.contains(#""op":"done""#))

        // The restart sends what the outbox holds and what the loader announces again.
        let restarted = try ChildProcess(herald, ["run", "--config", config.path])
        let finished = await restarted.waitForStandardError { text in
            let outcome = Self.outcomes(text)
            return outcome.sent + outcome.duplicate + outcome.failed >= 5
        }
        #expect(finished, "stderr: \(restarted.stderr)")
        restarted.signal(SIGTERM)
        let stopped = try #require(await restarted.finish())
        #expect(stopped.status == 0)
        let outcome = Self.outcomes(stopped.stderr)
        #expect(outcome.failed == 0)
        #expect(outcome.duplicate == (crashPoint == "after-post" ? 1 : 0), "the post made before the kill is recognised, not repeated")

        let posts = try await sandbox.posts()
        #expect(posts.count == 5 && Set(posts).count == 5, "posts: \(posts)")
        #expect(posts.allSatisfy { $0.hasPrefix("Saw ") })
        #expect(afterCrash.allSatisfy(posts.contains))
        await sandbox.stop()
    }

    @Test func serverErrorsRateLimitsAndDropsEndAsSentAndUnauthorizedAsFailed() async throws {
        let herald = try #require(Self.herald)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)
        // The first post meets 503, 429 and a dropped connection, then goes through (a delay of
        // 0 is a normal answer); the second meets 401.
        try await sandbox.script(#"[503, 429, "drop", {"delay": 0}, 401]"#)

        let run = try ChildProcess(herald, ["run", "--config", config.path])
        let finished = await run.waitForStandardError { text in
            let outcome = Self.outcomes(text)
            return outcome.sent + outcome.failed >= 5
        }
        #expect(finished, "stderr: \(run.stderr)")
        run.signal(SIGTERM)
        let stopped = try #require(await run.finish())
        #expect(stopped.status == 0)
        let lines = stopped.stderr.split(separator: "\n").map(String.init)
        #expect(Self.outcomes(stopped.stderr) == (sent: 4, duplicate: 0, failed: 1))
        #expect(lines.contains { $0.contains("echo: sent ") && $0.contains("(4 attempts") }, "stderr: \(stopped.stderr)")
        let failure = try #require(lines.first { $0.contains("post.echo.failed") })
        #expect(failure.contains("ERROR") && failure.contains("401"), "a clear reason: \(failure)")
        #expect(!stopped.stderr.contains("sandbox-consumer-secret") && !stopped.stderr.contains("sandbox-token-secret"))

        let posts = try await sandbox.posts()
        #expect(posts.count == 4 && Set(posts).count == 4, "posts: \(posts)")
        await sandbox.stop()
    }

    /// The crash hook lives in a test-only helper: the shipping binary ignores
    /// `HERALD_CRASH_AT` and posts as usual.
    @Test func theShippingBinaryHasNoCrashHook() async throws {
        let herald = try #require(Self.herald)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_CRASH_AT"] = "after-intent"
        let run = try ChildProcess(herald, ["run", "--config", config.path], environment: environment)
        let posted = await run.waitForStandardError { Self.outcomes($0).sent >= 1 }
        #expect(posted, "stderr: \(run.stderr)")
        run.signal(SIGTERM)
        let stopped = try #require(await run.finish())
        #expect(stopped.status == 0, "stderr: \(stopped.stderr)")
        await sandbox.stop()
    }
}
