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

/// The outbox's exactly-once across SIGKILL, for Mastodon posts with media: `herald-crash-run`
/// killed at each fault point while posting, then `herald run` again, against a `herald
/// sandbox` process that outlives both. The sandbox's record (`GET /_sandbox/mastodon/posts`)
/// is the judge: each item posted once, with its media and alt text.
@Suite(.timeLimit(.minutes(5))) struct MastodonCrashTests {
    /// A daemon config: one load of account 2's three newest statuses, and a rule posting
    /// `Saw <id>` with a video and its alt text once per new status.
    static func daemonConfig(in directory: URL, sandbox: URL) throws -> URL {
        try Data(repeating: 7, count: 4096).write(to: directory.appendingPathComponent("clip.mp4"))
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {"state": "var/state",
             "services": {"masto": {"kind": "mastodon", "url": "\(sandbox.absoluteString)", "token": "sandbox-mastodon-token"}},
             "loaders": {"sakura": {"kind": "mastodon", "service": "masto", "timeline": "account", "account": "2", "limit": 3,
                                    "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"echo": {"on": "loader.sakura.finished", "for": "new", "service": "masto", "text": "Saw {{id}}",
                                            "visibility": "unlisted", "media": "clip.mp4", "description": "clip for {{id}}"}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    struct Posted: Decodable {
        var id: String
        var text: String
        var media_ids: [String]
        var media_descriptions: [String]
        var idempotency_key: String?
        var in_reply_to_id: String?
    }

    static func posts(_ sandbox: URL) async throws -> [Posted] {
        struct Body: Decodable { var posts: [Posted] }
        let (data, _) = try await URLSession.shared.data(from: sandbox.appendingPathComponent("_sandbox/mastodon/posts"))
        return try JSONDecoder().decode(Body.self, from: data).posts
    }

    @Test(arguments: ["after-intent", "after-post"])
    func aRunKilledMidPostPostsEachStatusAndItsMediaExactlyOnce(crashPoint: String) async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        let crashRun = try #require(PostReliabilityTests.crashRun)
        let crashed = try ChildProcess(crashRun, [crashPoint, "--config", config.path])
        let killed = try #require(await crashed.finish(within: .seconds(120)))
        #expect([SIGKILL, 128 + SIGKILL].contains(killed.status), "stderr: \(killed.stderr)")
        let afterCrash = try await Self.posts(sandbox.url)
        #expect(afterCrash.count == (crashPoint == "after-post" ? 1 : 0))
        let journal = try String(contentsOf: directory.appendingPathComponent("var/state/outbox/posts.jsonl"), encoding: .utf8)
        #expect(journal.contains(#""op":"intent""#) && !journal.contains(#""op":"done""#))

        let restarted = try ChildProcess(herald, ["run", "--config", config.path])
        let finished = await restarted.waitForStandardError { text in
            let outcome = PostReliabilityTests.outcomes(text)
            return outcome.sent + outcome.duplicate + outcome.failed >= 3
        }
        #expect(finished, "stderr: \(restarted.stderr)")
        restarted.signal(SIGTERM)
        let stopped = try #require(await restarted.finish())
        #expect(stopped.status == 0)
        let outcome = PostReliabilityTests.outcomes(stopped.stderr)
        #expect(outcome.failed == 0 && outcome.sent == 3, "stderr: \(stopped.stderr)")

        // The status made before the kill came back for its idempotency key; none is doubled.
        let posts = try await Self.posts(sandbox.url)
        #expect(posts.count == 3 && Set(posts.map(\.text)).count == 3, "posts: \(posts.map(\.text))")
        #expect(posts.allSatisfy { $0.text.hasPrefix("Saw ") && $0.media_ids.count == 1 && $0.idempotency_key != nil })
        #expect(posts.allSatisfy { $0.media_descriptions == ["clip for " + $0.text.dropFirst("Saw ".count)] })
        #expect(afterCrash.allSatisfy { made in posts.contains { $0.text == made.text } })
        #expect(!stopped.stderr.contains("sandbox-mastodon-token") && !killed.stderr.contains("sandbox-mastodon-token"))
        await sandbox.stop()
    }
}
