import Foundation
import HeraldTestSupport
import Testing

/// `herald post` on a mastodon service: the video uploaded and waited for, then the status
/// with an idempotency key of its own; the choice of service when there are both kinds.
@Suite(.timeLimit(.minutes(5))) struct MastodonPostCommandTests {
    static func config(in directory: URL, sandbox: URL, withTwitter: Bool) throws -> URL {
        let config = directory.appendingPathComponent("post.json")
        let twitter = withTwitter ? #", "twitter": {"url": "\#(sandbox.absoluteString)", "auth": \#(PostReliabilityTests.auth)}"# : ""
        try Data("""
            {"services": {"masto": {"kind": "mastodon", "url": "\(sandbox.absoluteString)", "token": "sandbox-mastodon-token"}\(twitter)},
             "loaders": {"toots": {"kind": "mastodon", "service": "masto", "timeline": "home", "every": "1h"}}}
            """.utf8).write(to: config)
        return config
    }

    @Test func postsAStatusWithAVideoToTheOnlyPostingServiceOrTheOneNamed() async throws {
        let herald = try #require(PostCommandTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)

        let alone = try Self.config(in: directory, sandbox: sandbox.url, withTwitter: false)
        let sample = BuiltProducts.packageRoot.appendingPathComponent("Examples/media/sample.mp4")
        let video = try #require(await ChildProcess.run(herald, ["post", "toot with a video", "--media", sample.path, "--config", alone.path]))
        #expect(video.status == 0, "stderr: \(video.stderr)")
        #expect(video.stdout.contains(" via masto") && video.stdout.contains(" with media "), "stdout: \(video.stdout)")
        #expect(video.stderr.split(separator: "\n").last { $0.hasPrefix("upload: ") }?.hasPrefix("upload: completed ") == true, "\(video.stderr)")
        let posted = try await MastodonCrashTests.posts(sandbox.url)
        #expect(posted.map(\.text) == ["toot with a video"])
        #expect(posted.first?.media_ids.count == 1 && posted.first?.idempotency_key?.hasPrefix("herald-post-") == true)
        #expect(!video.stderr.contains("sandbox-mastodon-token") && !video.stdout.contains("sandbox-mastodon-token"))

        // With a twitter service too, the twitter one is the default; --service picks Mastodon.
        let both = try Self.config(in: directory, sandbox: sandbox.url, withTwitter: true)
        let tweeted = try #require(await ChildProcess.run(herald, ["post", "to the twitter one", "--config", both.path]))
        #expect(tweeted.status == 0 && tweeted.stdout.contains(" via twitter"), "\(tweeted.stdout) \(tweeted.stderr)")
        let tooted = try #require(await ChildProcess.run(herald, ["post", "named", "--service", "masto", "--config", both.path]))
        #expect(tooted.status == 0 && tooted.stdout.contains(" via masto"), "\(tooted.stdout) \(tooted.stderr)")
        #expect(try await MastodonCrashTests.posts(sandbox.url).map(\.text) == ["toot with a video", "named"])
        // --reply-to: the status answers the first one (`in_reply_to_id`).
        let firstID = try #require(posted.first?.id)
        let reply = try #require(await ChildProcess.run(herald, ["post", "a reply", "--service", "masto", "--reply-to", firstID,
                                                                 "--config", both.path]))
        #expect(reply.status == 0, "\(reply.stderr)")
        let thread = try await MastodonCrashTests.posts(sandbox.url)
        #expect(thread.map(\.text) == ["toot with a video", "named", "a reply"])
        #expect(thread.map(\.in_reply_to_id) == [nil, nil, firstID])
        #expect(try await sandbox.posts() == ["to the twitter one"])

        let wrongKind = try #require(await ChildProcess.run(herald, ["post", "x", "--service", "toots", "--config", both.path]))
        #expect(wrongKind.status == 2 || wrongKind.status == 1)
        #expect(wrongKind.stderr.contains("no service named \"toots\" (services that post: twitter, masto)"), "\(wrongKind.stderr)")
        await sandbox.stop()
    }
}
