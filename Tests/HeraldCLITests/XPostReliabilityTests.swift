import Foundation
import HeraldTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The crash tests of ``PostReliabilityTests`` for X API v2 posts (`POST /2/tweets`), with and
/// without a video (the v2 chunked upload): `herald-crash-run` kills itself with SIGKILL at each
/// fault point of the outbox, `herald run` restarts, and the sandbox process's record of posts
/// is the judge: each item is posted exactly once.
@Suite(.timeLimit(.minutes(5))) struct XPostReliabilityTests {
    /// A daemon config on an `"api": "v2"` service: one load of @itmedia's five newest posts
    /// (`GET /2/users/:id/tweets`), and a rule posting `Saw <id>` once per new post, with a
    /// video when `media` is set.
    static func daemonConfig(in directory: URL, sandbox: URL, media: Bool) throws -> URL {
        if media { try MP4Fixture.make().write(to: directory.appendingPathComponent("clip.mp4")) }
        let config = directory.appendingPathComponent("config.json")
        let mediaKey = media ? #", "media": "clip.mp4""# : ""
        try Data("""
            {"state": "var/state",
             "services": {"x": {"kind": "twitter", "api": "v2", "url": "\(sandbox.absoluteString)", "auth": \(PostReliabilityTests.auth)}},
             "loaders": {"itmedia": {"kind": "timeline", "service": "x", "timeline": "user", "screenName": "itmedia",
                                     "count": 5, "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"echo": {"on": "loader.itmedia.finished", "for": "new", "service": "x", "text": "Saw {{id_str}}"\(mediaKey)}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    @Test(arguments: ["after-intent", "after-post"], [false, true])
    func aRunKilledMidPostPostsEachItemExactlyOnceAfterRestart(crashPoint: String, media: Bool) async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url, media: media)

        let crashRun = try #require(PostReliabilityTests.crashRun)
        let crashed = try ChildProcess(crashRun, [crashPoint, "--config", config.path])
        let killed = try #require(await crashed.finish(within: .seconds(120)))
        #expect([SIGKILL, 128 + SIGKILL].contains(killed.status), "stderr: \(killed.stderr)")
        let afterCrash = try await sandbox.posts()
        #expect(afterCrash.count == (crashPoint == "after-post" ? 1 : 0))
        let journal = try String(contentsOf: directory.appendingPathComponent("var/state/outbox/posts.jsonl"), encoding: .utf8)
        #expect(journal.contains(#""op":"intent""#) && !journal.contains(#""op":"done""#))

        let restarted = try ChildProcess(herald, ["run", "--config", config.path])
        let finished = await restarted.waitForStandardError { text in
            let outcome = PostReliabilityTests.outcomes(text)
            return outcome.sent + outcome.duplicate + outcome.failed >= 5
        }
        #expect(finished, "stderr: \(restarted.stderr)")
        restarted.signal(SIGTERM)
        let stopped = try #require(await restarted.finish())
        #expect(stopped.status == 0)
        let outcome = PostReliabilityTests.outcomes(stopped.stderr)
        #expect(outcome.failed == 0, "stderr: \(stopped.stderr)")
        #expect(outcome.duplicate == (crashPoint == "after-post" ? 1 : 0), "the post made before the kill is recognised, not repeated")

        let posts = try await sandbox.posts()
        #expect(posts.count == 5 && Set(posts).count == 5, "posts: \(posts)")
        #expect(posts.allSatisfy { $0.hasPrefix("Saw ") })
        #expect(afterCrash.allSatisfy(posts.contains))
        if media {
            let withMedia = try await Self.mediaCounts(sandbox.url)
            #expect(withMedia == Array(repeating: 1, count: 5), "each post carries its one video")
        }
        #expect(!stopped.stderr.contains("sandbox-consumer-secret") && !stopped.stderr.contains("sandbox-token-secret"))
        await sandbox.stop()
    }

    /// How many media ids each post carries, oldest first.
    static func mediaCounts(_ sandbox: URL) async throws -> [Int] {
        let (data, _) = try await URLSession.shared.data(from: sandbox.appendingPathComponent("_sandbox/posts"))
        let posts = ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["posts"] as? [[String: Any]]) ?? []
        return posts.map { ($0["media_ids"] as? [Any])?.count ?? 0 }
    }
}
