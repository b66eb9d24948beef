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

/// Replies end to end: a post rule's `inReplyTo` (rendered from the new item, written to the
/// outbox, sent by the daemon) and `herald post --reply-to`, against a `herald sandbox` process
/// whose record of posts (`GET /_sandbox/posts`) says what the service was asked to reply to.
@Suite(.timeLimit(.minutes(5))) struct ReplyRuleTests {
    /// One load of @itmedia's five newest posts, and a rule answering each: `Re <id>`, in reply to `<id>`.
    static func daemonConfig(in directory: URL, sandbox: URL, api: String) throws -> URL {
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {"state": "var/state",
             "services": {"x": {"kind": "twitter", "api": "\(api)", "url": "\(sandbox.absoluteString)", "auth": \(PostReliabilityTests.auth)}},
             "loaders": {"itmedia": {"kind": "timeline", "service": "x", "timeline": "user", "screenName": "itmedia",
                                     "count": 5, "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"echo": {"on": "loader.itmedia.finished", "for": "new", "service": "x",
                                            "text": "Re {{id_str}}", "inReplyTo": "{{id_str}}"}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    /// The sandbox's posts: text and the id each replies to.
    static func posts(_ sandbox: URL) async throws -> [(text: String, reply: String?)] {
        let (data, _) = try await URLSession.shared.data(from: sandbox.appendingPathComponent("_sandbox/posts"))
        let posts = ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["posts"] as? [[String: Any]]) ?? []
        return posts.map { ($0["text"] as? String ?? "", $0["in_reply_to_status_id_str"] as? String) }
    }

    /// X API v2 sends `reply.in_reply_to_tweet_id`, v1.1 `in_reply_to_status_id`; either way the
    /// sandbox records the post as a reply to the item that triggered it.
    @Test(arguments: ["v2", "v1.1"])
    func aRuleRepliesToTheItemThatTriggeredIt(api: String) async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url, api: api)

        let run = try ChildProcess(herald, ["run", "--config", config.path])
        let finished = await run.waitForStandardError { text in
            let outcome = PostReliabilityTests.outcomes(text)
            return outcome.sent + outcome.duplicate + outcome.failed >= 5
        }
        #expect(finished, "stderr: \(run.stderr)")
        run.signal(SIGTERM)
        let stopped = try #require(await run.finish())
        #expect(stopped.status == 0)
        #expect(PostReliabilityTests.outcomes(stopped.stderr).failed == 0, "stderr: \(stopped.stderr)")

        let posts = try await Self.posts(sandbox.url)
        #expect(posts.count == 5, "posts: \(posts)")
        for post in posts {
            let id = String(post.text.dropFirst("Re ".count))
            #expect(!id.isEmpty && post.reply == id, "\(post.text) replies to \(post.reply ?? "nothing")")
        }
        // The reply went through the outbox: each intent was journalled with it before it was sent.
        let journal = try String(contentsOf: directory.appendingPathComponent("var/state/outbox/posts.jsonl"), encoding: .utf8)
        for post in posts {
            #expect(journal.contains(#""inReplyTo":"\#(post.reply ?? "?")""#), "journal: \(journal)")
        }
        await sandbox.stop()
    }

    @Test func heraldPostReplyToSendsTheReplyAndTheSandboxRefusesAnIdThatIsNotOne() async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try XPostCommandTests.config(in: directory, sandbox: sandbox.url)

        let first = try #require(await ChildProcess.run(herald, ["post", "the thread starts", "--config", config.path]))
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let firstID = try #require(first.stdout.split(separator: " ").dropFirst(2).first.map(String.init), "stdout: \(first.stdout)")
        let reply = try #require(await ChildProcess.run(herald, ["post", "and goes on", "--reply-to", firstID, "--config", config.path]))
        #expect(reply.status == 0, "stderr: \(reply.stderr)")
        // The v2 emulator refuses a reply id that is not a post id (the reference's ^[0-9]{1,19}$),
        // rather than posting a status that answers nothing.
        let bad = try #require(await ChildProcess.run(herald, ["post", "to nothing", "--reply-to", "abc", "--config", config.path]))
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("in_reply_to_tweet_id"), "stderr: \(bad.stderr)")

        let posts = try await Self.posts(sandbox.url)
        #expect(posts.map(\.text) == ["the thread starts", "and goes on"])
        #expect(posts.map(\.reply) == [nil, firstID])
        await sandbox.stop()
    }
}
