import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import Testing

@Suite struct MastodonConfigTests {
    /// The demo plus a mastodon service on the sandbox, a loader and a cross-post rule each way.
    static var withMastodon: [String: Any] {
        var object = ConfigFixtures.demo
        object = ConfigFixtures.set(object, "services.masto", ["kind": "mastodon", "url": "sandbox",
                                                              "token": ["env": "MASTO_TOKEN", "default": "sandbox-mastodon-token"]])
        object = ConfigFixtures.set(object, "loaders.toots", ["kind": "mastodon", "service": "masto", "timeline": "hashtag",
                                                              "tag": "#herald", "limit": 40, "every": "1m"])
        object = ConfigFixtures.set(object, "subscribers.posts", ["kind": "post", "rules": [
            "to-x": ["on": "loader.toots.finished", "for": "new", "service": "twitter", "text": "{{text}} ({{account.acct}})"],
            "to-masto": ["on": "loader.home.finished", "for": "new", "service": "masto", "text": "{{text}}", "visibility": "unlisted",
                         "spoiler": "from {{user.screen_name}}", "language": "en"],
        ]])
        return object
    }

    @Test func aMastodonServiceLoaderAndCrossPostRulesAreValid() throws {
        let data = try JSONSerialization.data(withJSONObject: Self.withMastodon)
        let configuration = try ConfigLoader(environment: ["MASTO_TOKEN": "from-the-environment"])
            .parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        guard case .mastodon(.sandbox, let token, _)? = configuration.services["masto"] else {
            Issue.record("expected a mastodon service")
            return
        }
        #expect(token == "from-the-environment")
        #expect(configuration.secrets.contains("from-the-environment"))
        #expect(configuration.loaders["toots"]?.kind == .mastodon(.init(timeline: .hashtag("herald"), limit: 40)))
        #expect(configuration.sandboxConfiguration().mastodon.token == "from-the-environment")
        guard case .post(let posting)? = configuration.subscribers["posts"],
              case .mastodonStatus(let template)? = posting.rules.first(where: { $0.name == "to-masto" })?.target else {
            Issue.record("expected a mastodon rule")
            return
        }
        #expect(template.visibility == "unlisted" && template.language == "en" && template.spoiler?.source == "from {{user.screen_name}}")
    }

    @Test(arguments: [
        ("loaders.toots.service", #""twitter""#,
         "loaders.toots.service: \"twitter\" is a twitter service; a mastodon loader needs a mastodon service"),
        ("loaders.home.service", #""masto""#,
         "loaders.home.service: \"masto\" is a mastodon service; a timeline loader needs a twitter service"),
        ("loaders.toots.timeline", #""trending""#,
         "loaders.toots.timeline: \"trending\" is not one of home, public, local, hashtag, list, account"),
        ("loaders.toots.tag", nil as String?,
         "loaders.toots.tag: required"),
        ("loaders.toots.limit", "41",
         "loaders.toots.limit: 41 is not in 1...40"),
        ("loaders.toots.lsit", #""1""#,
         "loaders.toots.lsit: unknown key (did you mean \"list\"?)"),
        ("loaders.toots.list", #""1""#,
         "loaders.toots.list: only for \"timeline\": \"list\""),
        ("services.masto.token", nil as String?,
         "services.masto.token: required"),
        ("services.masto.tokn", #""x""#,
         "services.masto.tokn: unknown key (did you mean \"token\"?)"),
        ("subscribers.posts.rules.to-masto.visibility", #""friends""#,
         "subscribers.posts.rules.to-masto.visibility: \"friends\" is not one of direct, private, public, unlisted"),
        ("subscribers.posts.rules.to-masto.language", #""English""#,
         "subscribers.posts.rules.to-masto.language: \"English\" is not an ISO 639 language code (two or three lowercase letters, e.g. \"en\", \"ja\")"),
        ("subscribers.posts.rules.to-masto.description", #""alt""#,
         "subscribers.posts.rules.to-masto.description: the media's alt text; there is no \"media\""),
        ("subscribers.posts.rules.to-masto.media", #""notes.txt""#,
         "subscribers.posts.rules.to-masto.media: \"notes.txt\" is not an image, video or audio file (jpg, png, gif, webp, mp4, webm, mov, mp3, ogg, …)"),
        ("subscribers.posts.rules.to-x.visibility", #""public""#,
         "subscribers.posts.rules.to-x.visibility: only for a mastodon service; \"service\" is a twitter service"),
        ("subscribers.posts.rules.to-x.text", #""{{nope}}""#,
         "subscribers.posts.rules.to-x.text: \"nope\" is not a field of mastodon loader \"toots\"'s new items (account, content, created_at, id, in_reply_to_id, language, media_attachments, spoiler_text, text, url, visibility) or events (loader, newStatuses, rateLimitRemaining, statuses, timeline)"),
    ] as [(String, String?, String)])
    func mistakesAreReportedWithTheirPaths(path: String, json: String?, expected: String) throws {
        let value = try json.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
        let issues = ConfigFixtures.issues(ConfigFixtures.set(Self.withMastodon, path, value))
        #expect(issues.contains(expected), "\(issues)")
    }

    @Test func aTokenIsNeverQuotedInAnError() {
        let issues = ConfigFixtures.issues(ConfigFixtures.set(Self.withMastodon, "services.masto.token", 12345))
        #expect(issues == ["services.masto.token: expected a string or {\"env\": \"NAME\", \"default\": \"…\"}, got a number"])
    }

    /// The schema's mastodon service and loader have the keys the validator allows.
    @Test func theSchemaDescribesTheMastodonServiceAndLoader() throws {
        let data = try Data(contentsOf: ConfigSchemaTests.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let service = try #require(definitions["mastodonService"] as? [String: Any])
        #expect((service["properties"] as? [String: Any])?.keys.sorted() == ["caFile", "insecure", "kind", "timeout", "token", "url"])
        let loader = try #require(definitions["mastodonLoader"] as? [String: Any])
        #expect((loader["properties"] as? [String: Any])?.keys.sorted()
            == ["account", "backoff", "every", "jitter", "kind", "limit", "list", "service", "tag", "timeline"])
        let timelines = ((loader["properties"] as? [String: Any])?["timeline"] as? [String: Any])?["enum"] as? [String]
        #expect(timelines == ["home", "public", "local", "hashtag", "list", "account"])
    }
}
