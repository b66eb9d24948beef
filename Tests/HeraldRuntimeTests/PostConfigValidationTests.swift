import Foundation
import Herald
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import Testing

extension ConfigFixtures {
    /// `demo` with a `"kind": "post"` subscriber `posts`: a twitter rule `tweet` per new todo
    /// (whose fields are free-form) and a baas rule `store` per new status of `home`.
    static var withPosts: [String: Any] {
        Self.set(demo, "subscribers.posts", [
            "kind": "post",
            "rules": [
                "tweet": ["on": "loader.todos.finished", "for": "new", "service": "twitter", "text": "New todo: {{description}}"],
                "store": ["on": "loader.home.finished", "for": "new", "service": "baas", "bucket": "mentions",
                          "fields": ["text": "{{text}}", "done": false] as [String: Any]],
            ] as [String: Any],
        ] as [String: Any])
    }

    static func postIssues(setting path: String, to json: String?) throws -> [String] {
        let value = try json.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
        return issues(set(withPosts, path, value))
    }
}

@Suite struct PostConfigValidationTests {
    static let statusFields = "created_at, id_str, in_reply_to_status_id_str, text, user"
    static let timelineEventFields = "loader, newStatuses, rateLimitRemaining, statuses"

    @Test func theFixtureIsValid() {
        #expect(ConfigFixtures.issues(ConfigFixtures.withPosts) == [])
    }

    /// (path, the JSON put there or nil to remove the key, the exact message expected)
    @Test(arguments: [
        // The subscriber.
        ("subscribers.posts.rules", nil, "subscribers.posts.rules: required"),
        ("subscribers.posts.rules", #"{}"#, "subscribers.posts.rules: expected an object of one or more rules by name, got an empty object"),
        ("subscribers.posts.rules", #"["tweet"]"#, "subscribers.posts.rules: expected an object of one or more rules by name, got an array"),
        ("subscribers.posts.rule", #"{}"#, #"subscribers.posts.rule: unknown key (did you mean "rules"?)"#),
        ("subscribers.posts.outbox", #"5"#, "subscribers.posts.outbox: expected a string, got 5"),
        ("subscribers.posts.retry", #"{"initial": "10s", "max": "1s"}"#, "subscribers.posts.retry.max: must not be shorter than retry.initial"),
        ("subscribers.posts.retry", #"{"attempts": 0}"#, "subscribers.posts.retry.attempts: 0 is not in 1...1000"),
        ("subscribers.posts.retry", #"{"initial": "0s"}"#, "subscribers.posts.retry.initial: must be longer than 0"),
        ("subscribers.posts.retry", #"{"intial": "1s"}"#, #"subscribers.posts.retry.intial: unknown key (did you mean "initial"?)"#),
        ("subscribers.posts.retry", #""5m""#, #"subscribers.posts.retry: expected an object, got "5m""#),
        // A rule's name, event and service.
        ("subscribers.posts.rules.my rule", #"{"on": "loader.todos.finished", "service": "twitter", "text": "x"}"#,
         #"subscribers.posts.rules.my rule: "my rule" is not a valid rule name (letters, digits, - and _ only)"#),
        ("subscribers.posts.rules.tweet", #""post it""#, #"subscribers.posts.rules.tweet: expected an object, got "post it""#),
        ("subscribers.posts.rules.tweet.on", nil, "subscribers.posts.rules.tweet.on: required"),
        ("subscribers.posts.rules.tweet.on", #""loader.>.x""#, #"subscribers.posts.rules.tweet.on: "loader.>.x" is not a topic pattern"#),
        ("subscribers.posts.rules.tweet.on", #""loader.nope.finished""#,
         #"subscribers.posts.rules.tweet.on: no loader named "nope" (loaders: "home", "images", "itmedia", "todos")"#),
        ("subscribers.posts.rules.tweet.service", nil, "subscribers.posts.rules.tweet.service: required"),
        ("subscribers.posts.rules.tweet.service", #""twiter""#,
         #"subscribers.posts.rules.tweet.service: no service named "twiter" (services: "baas", "tiqav", "twitter")"#),
        ("subscribers.posts.rules.tweet.service", #""tiqav""#,
         #"subscribers.posts.rules.tweet.service: "tiqav" is a tiqav service; posts go to a twitter, baas, mastodon or webhook service"#),
        ("subscribers.posts.rules.tweet.for", #""all""#, #"subscribers.posts.rules.tweet.for: "all" is not one of new, event"#),
        ("subscribers.posts.rules.tweet.txt", #""hi""#, #"subscribers.posts.rules.tweet.txt: unknown key (did you mean "text"?)"#),
        ("subscribers.posts.rules.tweet.quite", #"{"from": "22:00", "to": "07:00"}"#,
         #"subscribers.posts.rules.tweet.quite: unknown key (did you mean "quiet"?)"#),
        // What the service takes.
        ("subscribers.posts.rules.tweet.bucket", #""todos""#,
         #"subscribers.posts.rules.tweet.bucket: only for a baas service; a twitter service posts "text""#),
        ("subscribers.posts.rules.tweet.fields", #"{"a": 1}"#,
         #"subscribers.posts.rules.tweet.fields: only for a baas service; a twitter service posts "text""#),
        ("subscribers.posts.rules.store.text", #""hello""#,
         #"subscribers.posts.rules.store.text: only for a twitter service; a baas service creates an object from "fields""#),
        ("subscribers.posts.rules.store.media", #""clips/a.mp4""#,
         #"subscribers.posts.rules.store.media: only for a twitter service; a baas service creates an object from "fields""#),
        ("subscribers.posts.rules.tweet.text", nil, "subscribers.posts.rules.tweet.text: required"),
        ("subscribers.posts.rules.tweet.text", #""""#, "subscribers.posts.rules.tweet.text: must not be empty"),
        ("subscribers.posts.rules.store.bucket", nil, "subscribers.posts.rules.store.bucket: required"),
        ("subscribers.posts.rules.store.fields", nil, "subscribers.posts.rules.store.fields: required"),
        ("subscribers.posts.rules.store.fields", #"["text"]"#, "subscribers.posts.rules.store.fields: expected an object of fields, got an array"),
        ("subscribers.posts.rules.store.fields.heraldKey", #""mine""#,
         "subscribers.posts.rules.store.fields.heraldKey: reserved: the post's idempotency key is stored there"),
        // Templates.
        ("subscribers.posts.rules.tweet.text", #""Hi {{description""#,
         #"subscribers.posts.rules.tweet.text: "{{" is never closed by "}}" at character 4 of "Hi {{description""#),
        ("subscribers.posts.rules.tweet.text", #""Hi {{}}""#, #"subscribers.posts.rules.tweet.text: empty placeholder at character 4 of "Hi {{}}""#),
        ("subscribers.posts.rules.tweet.text", #""Hi {{ }}""#, #"subscribers.posts.rules.tweet.text: empty placeholder at character 4 of "Hi {{ }}""#),
        ("subscribers.posts.rules.tweet.text", #""{{a b}}""#, #"subscribers.posts.rules.tweet.text: "a b" is not a field path at character 1 of "{{a b}}""#),
        ("subscribers.posts.rules.store.fields.text", #""{{text""#,
         #"subscribers.posts.rules.store.fields.text: "{{" is never closed by "}}" at character 1 of "{{text""#),
        // Conditions.
        ("subscribers.posts.rules.tweet.when", #""urgent""#,
         #"subscribers.posts.rules.tweet.when: expected a condition object or an array of them, got "urgent""#),
        ("subscribers.posts.rules.tweet.when", #"{"field": "description", "equals": "a", "contains": "b"}"#,
         #"subscribers.posts.rules.tweet.when: "equals" and "contains" together; expected exactly one of "equals", "contains", "exists""#),
        ("subscribers.posts.rules.tweet.when", #"{"field": "description"}"#,
         #"subscribers.posts.rules.tweet.when: no test; expected exactly one of "equals", "contains", "exists""#),
        ("subscribers.posts.rules.tweet.when", #"{"field": "description", "contains": 5}"#,
         "subscribers.posts.rules.tweet.when.contains: expected a string, got 5"),
        ("subscribers.posts.rules.tweet.when", #"[{"field": "done", "exists": true}, {"field": "description", "exists": "yes"}]"#,
         #"subscribers.posts.rules.tweet.when[1].exists: expected true or false, got "yes""#),
        ("subscribers.posts.rules.tweet.when", #"{"field": "a..b", "exists": true}"#,
         #"subscribers.posts.rules.tweet.when.field: "a..b" is not a field path"#),
        ("subscribers.posts.rules.tweet.when", #"{"contains": "urgent"}"#, "subscribers.posts.rules.tweet.when.field: required"),
        ("subscribers.posts.rules.tweet.when", #"{"field": "description", "contain": "urgent"}"#,
         #"subscribers.posts.rules.tweet.when.contain: unknown key (did you mean "contains"?)"#),
        ("subscribers.posts.rules.tweet.when", #"[5]"#, "subscribers.posts.rules.tweet.when[0]: expected an object, got 5"),
        // Rate.
        ("subscribers.posts.rules.tweet.rate", #""10/x""#,
         #"subscribers.posts.rules.tweet.rate: "10/x" is not a rate; write posts/unit, e.g. "10/h" (units s, m, h, d)"#),
        ("subscribers.posts.rules.tweet.rate", #""ten/h""#,
         #"subscribers.posts.rules.tweet.rate: "ten/h" is not a rate; write posts/unit, e.g. "10/h" (units s, m, h, d)"#),
        ("subscribers.posts.rules.tweet.rate", #""10""#,
         #"subscribers.posts.rules.tweet.rate: "10" is not a rate; write posts/unit, e.g. "10/h" (units s, m, h, d)"#),
        ("subscribers.posts.rules.tweet.rate", #""0/h""#, #"subscribers.posts.rules.tweet.rate: "0/h" allows no posts; the count must be at least 1"#),
        ("subscribers.posts.rules.tweet.rate", #"10"#, "subscribers.posts.rules.tweet.rate: expected a string, got 10"),
        // Quiet hours.
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "25:00", "to": "07:00"}"#,
         #"subscribers.posts.rules.tweet.quiet.from: "25:00" is not a time of day (HH:MM, 00:00 to 23:59)"#),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "22:00", "to": "7:00"}"#,
         #"subscribers.posts.rules.tweet.quiet.to: "7:00" is not a time of day (HH:MM, 00:00 to 23:59)"#),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "+7:00", "to": "07:30"}"#,
         #"subscribers.posts.rules.tweet.quiet.from: "+7:00" is not a time of day (HH:MM, 00:00 to 23:59)"#),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "22:00", "to": "07:00", "timeZone": "Mars/Olympus"}"#,
         #"subscribers.posts.rules.tweet.quiet.timeZone: "Mars/Olympus" is not a time zone (e.g. "UTC", "Asia/Tokyo")"#),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "22:00"}"#, "subscribers.posts.rules.tweet.quiet.to: required"),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "22:00", "to": "22:00"}"#,
         #"subscribers.posts.rules.tweet.quiet: "from" and "to" are the same time, so it would never be quiet; leave "quiet" out instead"#),
        ("subscribers.posts.rules.tweet.quiet", #"{"from": "22:00", "to": "07:00", "zone": "UTC"}"#,
         "subscribers.posts.rules.tweet.quiet.zone: unknown key"),
        ("subscribers.posts.rules.tweet.quiet", #""22:00-07:00""#, #"subscribers.posts.rules.tweet.quiet: expected an object, got "22:00-07:00""#),
        // Media.
        ("subscribers.posts.rules.tweet.media", #""clips/none.mp4""#,
         #"subscribers.posts.rules.tweet.media: no such file: "clips/none.mp4" (relative to the config's directory)"#),
        ("subscribers.posts.rules.tweet.media", #""clips/a.mov""#,
         #"subscribers.posts.rules.tweet.media: "clips/a.mov" is not an MP4 video (the file's name must end in .mp4)"#),
        ("subscribers.posts.rules.tweet.media", #"5"#, #"subscribers.posts.rules.tweet.media: expected a file path or {"field": "…"}, got 5"#),
        ("subscribers.posts.rules.tweet.media", #"{"field": "a b"}"#, #"subscribers.posts.rules.tweet.media.field: "a b" is not a field path"#),
        ("subscribers.posts.rules.tweet.media", #"{"file": "a.mp4"}"#, "subscribers.posts.rules.tweet.media.field: required"),
    ] as [(String, String?, String)])
    func eachPostProblemNamesItsPath(path: String, json: String?, expected: String) throws {
        let issues = try ConfigFixtures.postIssues(setting: path, to: json)
        #expect(issues.contains(expected), "got \(issues)")
    }

    /// Placeholders and condition fields checked against what a known loader's events carry,
    /// each reported at the key that names it.
    @Test(arguments: [
        ("subscribers.posts.rules.store.fields.text", #""{{nope}}""#,
         #"subscribers.posts.rules.store.fields.text: "nope" is not a field of timeline loader "home"'s new items (\#(Self.statusFields)) or events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.store.fields.text", #""{{item.nope}}""#,
         #"subscribers.posts.rules.store.fields.text: "item.nope" is not a field of timeline loader "home"'s new items (\#(Self.statusFields))"#),
        ("subscribers.posts.rules.store.fields.text", #""{{event.text}}""#,
         #"subscribers.posts.rules.store.fields.text: "event.text" is not a field of timeline loader "home"'s events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.store.fields.who", #"{"name": "{{author}}"}"#,
         #"subscribers.posts.rules.store.fields.who: "author" is not a field of timeline loader "home"'s new items (\#(Self.statusFields)) or events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.store.when", #"{"field": "nope", "exists": true}"#,
         #"subscribers.posts.rules.store.when.field: "nope" is not a field of timeline loader "home"'s new items (\#(Self.statusFields)) or events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.store.when", #"[{"field": "text", "exists": true}, {"field": "item.retweets", "equals": 0}]"#,
         #"subscribers.posts.rules.store.when[1].field: "item.retweets" is not a field of timeline loader "home"'s new items (\#(Self.statusFields))"#),
        ("subscribers.posts.rules.store.for", #""event""#,
         #"subscribers.posts.rules.store.fields.text: "text" is not a field of timeline loader "home"'s events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.shout", #"{"on": "loader.home.finished", "service": "twitter", "text": "{{item.text}}"}"#,
         #"subscribers.posts.rules.shout.text: "item.text" names the new item, which there is only with "for": "new""#),
        ("subscribers.posts.rules.shout", #"{"on": "loader.home.finished", "for": "event", "service": "twitter", "text": "{{loader}}", "media": {"field": "video"}}"#,
         #"subscribers.posts.rules.shout.media.field: "video" is not a field of timeline loader "home"'s events (\#(Self.timelineEventFields))"#),
        ("subscribers.posts.rules.pics", #"{"on": "loader.images.finished", "for": "new", "service": "twitter", "text": "{{url}}"}"#,
         #"subscribers.posts.rules.pics.text: "url" is not a field of tiqav loader "images"'s new items (ext, height, id, source_url, width) or events (imageURLs, images, loader, newImages)"#),
    ] as [(String, String, String)])
    func placeholdersMustBeFieldsOfTheLoadersEvents(path: String, json: String, expected: String) throws {
        let issues = try ConfigFixtures.postIssues(setting: path, to: json)
        #expect(issues == [expected])
    }

    @Test func fieldsOfTheEventTheTopicAndItemFieldsAreAccepted() throws {
        var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.store.fields",
                                        ["text": "{{text}} by {{user.screen_name}} on {{topic}} ({{loader}}, {{event.rateLimitRemaining}})",
                                         "id": "{{item.id_str}}", "all": "{{event.newStatuses.0.text}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.count",
                                    ["on": "loader.home.finished", "service": "twitter", "text": "{{loader}}: {{statuses}} {{topic}}"])
        #expect(ConfigFixtures.issues(object) == [])
    }

    /// A todo's fields are the bucket's own: any placeholder of a todo rule is accepted.
    @Test func aTodoRulesFreeFormItemFieldsAreAccepted() {
        let object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.tweet", [
            "on": "loader.todos.finished", "for": "new", "service": "twitter",
            "text": "{{title}} {{item.priority}} {{item.owner.name}} in {{bucket}}",
            "when": ["field": "labels", "contains": "public"], "media": ["field": "item.video"],
        ] as [String: Any])
        #expect(ConfigFixtures.issues(object) == [])
    }

    /// Rules on other topics (a pattern, another loader event, a post event) are not checked.
    @Test func rulesOnOtherTopicsAreNotChecked() {
        var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.store.on", "loader.*.finished")
        object = ConfigFixtures.set(object, "subscribers.posts.rules.alarm",
                                    ["on": "loader.home.failed", "service": "twitter", "text": "{{error.message}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.echo",
                                    ["on": "post.store.sent", "service": "twitter", "text": "stored {{id}}"])
        #expect(ConfigFixtures.issues(object) == [])
    }

    @Test func aRuleOnAnInvalidLoaderIsNotReportedTwice() {
        let object = ConfigFixtures.set(ConfigFixtures.withPosts, "loaders.home.every", "30x")
        #expect(ConfigFixtures.issues(object) == [#"loaders.home.every: "30x" is not a duration"#])
    }

    @Test func aRuleOnAnInvalidServiceIsNotReportedTwice() {
        let object = ConfigFixtures.set(ConfigFixtures.withPosts, "services.twitter.auth", nil)
        #expect(ConfigFixtures.issues(object) == ["services.twitter.auth: required"])
    }

    /// An unknown `for` is one problem: the fields are not then checked against the wrong scope.
    @Test func aBadScopeIsReportedAlone() throws {
        #expect(try ConfigFixtures.postIssues(setting: "subscribers.posts.rules.store.for", to: #""all""#)
            == [#"subscribers.posts.rules.store.for: "all" is not one of new, event"#])
    }

    @Test func everyRuleProblemIsReportedAtOnce() {
        var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.tweet.rate", "ten/h")
        object = ConfigFixtures.set(object, "subscribers.posts.rules.tweet.quiet", ["from": "25:00", "to": "7:00"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.store.bucket", nil)
        object = ConfigFixtures.set(object, "subscribers.posts.retry", ["attempts": 0])
        #expect(ConfigFixtures.issues(object) == [
            "subscribers.posts.retry.attempts: 0 is not in 1...1000",
            "subscribers.posts.rules.store.bucket: required",
            #"subscribers.posts.rules.tweet.rate: "ten/h" is not a rate; write posts/unit, e.g. "10/h" (units s, m, h, d)"#,
            #"subscribers.posts.rules.tweet.quiet.from: "25:00" is not a time of day (HH:MM, 00:00 to 23:59)"#,
            #"subscribers.posts.rules.tweet.quiet.to: "7:00" is not a time of day (HH:MM, 00:00 to 23:59)"#,
        ])
    }

    @Test func aFullRuleIsReadIntoItsValues() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-posts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("clips"), withIntermediateDirectories: true)
        try Data("not really a video".utf8).write(to: directory.appendingPathComponent("clips/a.mp4"))
        var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.tweet", [
            "on": "loader.todos.finished", "for": "new", "service": "twitter", "text": "New todo: {{description}} ({{topic}})",
            "rate": "30/h", "media": "clips/a.mp4",
            "when": [["field": "description", "contains": "urgent"], ["field": "done", "equals": false],
                     ["field": "item.due", "exists": true]],
            "quiet": ["from": "22:00", "to": "07:00", "timeZone": "Asia/Tokyo"],
        ] as [String: Any])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.clip", [
            "on": "loader.todos.*", "service": "twitter", "text": "{{topic}}", "media": ["field": "item.video"],
            "when": ["field": "loader", "equals": "todos"],
        ] as [String: Any])
        object = ConfigFixtures.set(object, "subscribers.posts.retry", ["initial": "2s", "max": "1m", "attempts": 3] as [String: Any])
        object = ConfigFixtures.set(object, "subscribers.posts.outbox", "var/outbox.jsonl")
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: directory)
        let subscriber = try #require(configuration.subscribers["posts"])
        let posting = try #require(subscriber.posting)
        #expect(posting.rules.map(\.name) == ["clip", "store", "tweet"])
        #expect(subscriber.topics == ["loader.todos.*", "loader.home.finished", "loader.todos.finished"])
        #expect(posting.retry == PostScheduler.RetryPolicy(initial: .seconds(2), maximum: .seconds(60), attempts: 3))
        #expect(posting.outbox == "var/outbox.jsonl")

        let tweet = posting.rules[2]
        #expect(tweet.pattern == TopicPattern(stringLiteral: "loader.todos.finished"))
        #expect(tweet.scope == .newItems)
        #expect(tweet.service == "twitter")
        #expect(tweet.conditions == [
            PostCondition(field: try #require(FieldPath("description")), .contains("urgent")),
            PostCondition(field: try #require(FieldPath("done")), .equals(.bool(false))),
            PostCondition(field: try #require(FieldPath("item.due")), .exists(true)),
        ])
        #expect(tweet.rate == PostRate(count: 30, per: .seconds(3_600)))
        #expect(tweet.quiet == QuietHours(start: 22 * 60, end: 7 * 60, timeZone: try #require(TimeZone(identifier: "Asia/Tokyo"))))
        #expect(tweet.target == .status(text: try PostTemplate("New todo: {{description}} ({{topic}})"), media: .file("clips/a.mp4")))

        let clip = posting.rules[0]
        #expect(clip.scope == .event)
        #expect(clip.rate == nil)
        #expect(clip.quiet == nil)
        #expect(clip.conditions == [PostCondition(field: try #require(FieldPath("loader")), .equals(.string("todos")))])
        #expect(clip.target == .status(text: try PostTemplate("{{topic}}"), media: .field(try #require(FieldPath("item.video")))))

        let store = posting.rules[1]
        #expect(store.scope == .newItems)
        #expect(store.service == "baas")
        #expect(store.target == .object(bucket: "mentions", fields: ["text": .text(try PostTemplate("{{text}}")), "done": .value(.bool(false))]))
    }

    @Test func retryAndOutboxHaveDefaults() throws {
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: ConfigFixtures.withPosts), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        let posting = try #require(configuration.subscribers["posts"]?.posting)
        #expect(posting.retry == PostScheduler.RetryPolicy(initial: .seconds(1), maximum: .seconds(300), attempts: 10))
        #expect(posting.outbox == nil)
        #expect(configuration.subscribers["posts"]?.archive == nil)
    }

    /// The schema's post rule has the keys the validator allows, and says which are required.
    @Test func theSchemaDescribesAPostRulesKeys() throws {
        let data = try Data(contentsOf: ConfigSchemaTests.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let subscriber = try #require(definitions["postSubscriber"] as? [String: Any])
        #expect((subscriber["properties"] as? [String: Any])?.keys.sorted() == ["kind", "outbox", "retry", "rules"])
        #expect(subscriber["required"] as? [String] == ["kind", "rules"])
        let rule = try #require(definitions["postRule"] as? [String: Any])
        #expect((rule["properties"] as? [String: Any])?.keys.sorted()
            == ["body", "bucket", "description", "fields", "for", "inReplyTo", "language", "media", "on", "quiet", "rate", "service", "spoiler",
                "text", "visibility", "when"])
        #expect(rule["required"] as? [String] == ["on", "service"])
        #expect(rule["additionalProperties"] as? Bool == false)
    }

    /// The shipped example is a rule per new todo and service (the Twitter-style one and
    /// Mastodon) and one per new feed item (the sandbox's webhook receiver), each posted at
    /// most 30 times an hour.
    @Test func theShippedConfigPostsNewTodos() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try ConfigLoader(environment: [:]).load(contentsOf: root.appendingPathComponent("config.json"))
        let rules = try #require(configuration.subscribers["posts"]?.posting?.rules)
        #expect(rules.map(\.name) == ["news-hook", "todo-toot", "todo-tweet"])
        #expect(rules.map(\.service) == ["hook", "mastodon", "twitter"])
        for rule in rules {
            #expect(rule.scope == .newItems)
            #expect(rule.rate == PostRate(count: 30, per: .seconds(3_600)))
        }
    }
}
