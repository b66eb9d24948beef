import Foundation
import Herald
import HeraldIO
import HeraldRuntime
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldTestSupport
import Testing

/// A post rule's `inReplyTo`: read from the config with its checks, rendered into the intent,
/// journalled in the outbox (whose older lines, without it, still read), and sent as the
/// service's own reply field.
@Suite(.timeLimit(.minutes(5))) struct ReplyPostTests {
    static var withReplies: [String: Any] {
        var object = MastodonConfigTests.withMastodon
        object = ConfigFixtures.set(object, "services.x", ["kind": "twitter", "api": "v2", "url": "sandbox",
                                                          "auth": ["bearer": "sandbox-user-token"]])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.x-thread",
                                    ["on": "loader.home.finished", "for": "new", "service": "x", "text": "Re: {{text}}", "inReplyTo": "{{id_str}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.v1-thread",
                                    ["on": "loader.home.finished", "for": "new", "service": "twitter", "text": "Re: {{text}}", "inReplyTo": "{{id_str}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.masto-thread",
                                    ["on": "loader.toots.finished", "for": "new", "service": "masto", "text": "Re: {{text}}", "inReplyTo": "{{id}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.pinned",
                                    ["on": "loader.todos.finished", "service": "x", "text": "todos changed", "inReplyTo": "1850000000000000001"])
        return object
    }

    @Test func aRuleReadsInReplyToForTwitterXAndMastodonServices() throws {
        #expect(ConfigFixtures.issues(Self.withReplies) == [])
        let data = try JSONSerialization.data(withJSONObject: Self.withReplies)
        let configuration = try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        guard case .post(let posting)? = configuration.subscribers["posts"] else {
            Issue.record("no post subscriber")
            return
        }
        let rules = Dictionary(uniqueKeysWithValues: posting.rules.map { ($0.name, $0.target) })
        guard case .status(_, _, let x)? = rules["x-thread"], case .status(_, _, let v1)? = rules["v1-thread"],
              case .status(_, _, let pinned)? = rules["pinned"], case .mastodonStatus(let toot)? = rules["masto-thread"] else {
            Issue.record("unexpected targets: \(rules)")
            return
        }
        #expect(x?.source == "{{id_str}}" && v1?.source == "{{id_str}}" && pinned?.source == "1850000000000000001")
        #expect(toot.inReplyTo?.source == "{{id}}")
        // A rule without it is no reply.
        let plain = try ConfigLoader(environment: [:]).parse(JSONSerialization.data(withJSONObject: ConfigFixtures.withPosts),
                                                             baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        guard case .status(_, _, let none)? = plain.postRule("tweet") else {
            Issue.record("the fixture's tweet rule is gone")
            return
        }
        #expect(none == nil)
    }

    /// (path, the JSON put there, the exact message expected)
    @Test(arguments: [
        ("subscribers.posts.rules.x-thread.inReplyTo", #""abc""#,
         #"subscribers.posts.rules.x-thread.inReplyTo: "abc" is not a post id (decimal digits)"#),
        ("subscribers.posts.rules.x-thread.inReplyTo", #""12345678901234567890""#,
         #"subscribers.posts.rules.x-thread.inReplyTo: "12345678901234567890" is not a post id (decimal digits)"#),
        ("subscribers.posts.rules.x-thread.inReplyTo", "\"\"",
         "subscribers.posts.rules.x-thread.inReplyTo: must not be empty"),
        ("subscribers.posts.rules.masto-thread.inReplyTo", #""a b""#,
         #"subscribers.posts.rules.masto-thread.inReplyTo: "a b" is not a status id"#),
        ("subscribers.posts.rules.x-thread.inReplyTo", "7",
         "subscribers.posts.rules.x-thread.inReplyTo: expected a string, got 7"),
        ("subscribers.posts.rules.x-thread.inReplyTo", #""{{id_str""#,
         #"subscribers.posts.rules.x-thread.inReplyTo: "{{" is never closed by "}}" at character 1 of "{{id_str""#),
        ("subscribers.posts.rules.x-thread.inReplyTo", #""{{account.id}}""#,
         #"subscribers.posts.rules.x-thread.inReplyTo: "account.id" is not a field of timeline loader "home"'s new items (created_at, id_str, in_reply_to_status_id_str, text, user) or events (loader, newStatuses, rateLimitRemaining, statuses)"#),
        ("subscribers.posts.rules.x-thread.inRepyTo", #""{{id_str}}""#,
         #"subscribers.posts.rules.x-thread.inRepyTo: unknown key (did you mean "inReplyTo"?)"#),
        ("subscribers.posts.rules.to-bucket", #"{"on": "loader.home.finished", "service": "baas", "bucket": "b", "fields": {"a": 1}, "inReplyTo": "1"}"#,
         #"subscribers.posts.rules.to-bucket.inReplyTo: only for a twitter or mastodon service; "service" is a baas service"#),
    ] as [(String, String, String)])
    func aBadInReplyToIsNamedWithItsPath(path: String, json: String, message: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let issues = ConfigFixtures.issues(ConfigFixtures.set(Self.withReplies, path, value))
        #expect(issues.contains(message), "\(issues)")
    }

    @Test func aMastodonRuleRepliesWithInReplyToID() async throws {
        try await PostHarness.run { harness in
            let template = MastodonPostTemplate(text: try PostTemplate("On {{description}}"), inReplyTo: try PostTemplate("{{_id}}"))
            let scheduler = harness.mastodonScheduler(template)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["milk", "bread"]))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            await running.stop()
            let posts = harness.sandbox.mastodonPosts()
            #expect(posts.map(\.text) == ["On milk", "On bread"])
            #expect(posts.map(\.inReplyToID) == ["t1", "t2"])
        }
    }

    @Test func aRenderedReplyThatIsNotAPostIdFailsBeforeAnythingIsSent() async throws {
        try await PostHarness.run { harness in
            let rule = PostRule(name: "reply", on: "loader.todos.finished", scope: .newItems, service: "twitter",
                                target: .status(text: try PostTemplate("Re {{description}}"), media: nil,
                                                inReplyTo: try PostTemplate("{{description}}")))
            let scheduler = harness.scheduler([rule], services: [
                "twitter": XPostService(client: harness.base.x(), baseDirectory: harness.directory),
            ])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            let requests = harness.sandbox.requestsReceived
            try await harness.announce(PostHarness.todos(["not an id", "1850000000000000001"]))
            #expect(await harness.recorder.wait { $0.filter { $0.event is PostSent || $0.event is PostFailed }.count == 2 })
            await running.stop()
            let failed = harness.recorder.events(PostFailed.self)
            #expect(failed.count == 1 && failed.first?.attempts == 1)
            #expect(failed.first?.reason == #"inReplyTo rendered "not an id", which is not a post id (decimal digits)"#)
            // One request: the good reply's POST /2/tweets; none for the bad one.
            #expect(harness.sandbox.requestsReceived == requests + 1)
            #expect(harness.sandbox.posts().map(\.inReplyToStatusID) == ["1850000000000000001"])
        }
    }

    /// An outbox journal written before replies existed: its pending intents (a status without
    /// `inReplyTo`, a Mastodon status without it) still read, and read as no reply.
    @Test func anOldOutboxLineWithoutInReplyToStillReads() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-reply-outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("posts.jsonl").path
        let lines = [
            #"{"at":"2026-01-01T00:00:00.000Z","intent":{"content":{"status":{"media":null,"text":"old tweet"}},"correlation":null,"created":"2026-01-01T00:00:00.000Z","key":"a:item:loader.todos:t1","rule":"a","service":"twitter"},"key":"a:item:loader.todos:t1","op":"intent"}"#,
            #"{"at":"2026-01-01T00:00:00.000Z","intent":{"content":{"status":{"text":"older tweet"}},"correlation":null,"created":"2026-01-01T00:00:00.000Z","key":"a:item:loader.todos:t2","rule":"a","service":"twitter"},"key":"a:item:loader.todos:t2","op":"intent"}"#,
            #"{"at":"2026-01-01T00:00:00.000Z","intent":{"content":{"mastodonStatus":{"_0":{"text":"old toot","visibility":"unlisted"}}},"correlation":null,"created":"2026-01-01T00:00:00.000Z","key":"b:item:loader.todos:t1","rule":"b","service":"masto"},"key":"b:item:loader.todos:t1","op":"intent"}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let recovery = try PostOutbox(path: path, io: BlockingIOThread(name: "test.reply-outbox")).recover()
        #expect(recovery.setAside == 0)
        #expect(recovery.pending.map(\.content) == [
            .status(text: "old tweet", media: nil, inReplyTo: nil),
            .status(text: "older tweet", media: nil, inReplyTo: nil),
            .mastodonStatus(MastodonPostContent(text: "old toot", visibility: "unlisted", inReplyTo: nil)),
        ])
        // And a new line carries it, under the key the old lines lack.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let content = String(decoding: try encoder.encode(PostIntent.Content.status(text: "re", media: nil, inReplyTo: "42")), as: UTF8.self)
        #expect(content.contains(#""inReplyTo":"42""#) && content.contains(#""text":"re""#), "\(content)")
    }
}

extension HeraldConfiguration {
    /// The target of the post rule `name` of the subscriber `posts`.
    fileprivate func postRule(_ name: String) -> PostRule.Target? {
        guard case .post(let posting)? = subscribers["posts"] else { return nil }
        return posting.rules.first { $0.name == name }?.target
    }
}
