import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import Testing

/// The `feed` loader, the `webhook` service and webhook rules in `config.json`.
@Suite struct FeedWebhookConfigTests {
    static let secret = "whsec_" + Data(repeating: 42, count: 32).base64EncodedString()

    /// The demo plus a feed loader on the sandbox, a real one, a webhook service and a rule.
    static var withFeeds: [String: Any] {
        var object = ConfigFixtures.demo
        object = ConfigFixtures.set(object, "services.hook", ["kind": "webhook", "url": "sandbox",
                                                             "secret": ["env": "HOOK_SECRET", "default": secret],
                                                             "headers": ["X-Team": "ops", "Authorization": ["env": "HOOK_AUTH", "default": "Bearer abc"]],
                                                             "timeout": "20s"])
        object = ConfigFixtures.set(object, "services.slack", ["kind": "webhook", "url": ["env": "SLACK_URL", "default": "https://hooks.slack.com/services/T/B/X"]])
        object = ConfigFixtures.set(object, "loaders.news", ["kind": "feed", "url": "sandbox:/feeds/news.rss", "every": "200ms"])
        object = ConfigFixtures.set(object, "loaders.blog", ["kind": "feed", "url": "https://example.com/feed.xml", "every": "15m",
                                                            "timeout": "10s", "maxBytes": 2_000_000])
        object = ConfigFixtures.set(object, "subscribers.posts", ["kind": "post", "rules": [
            "hook": ["on": "loader.news.finished", "for": "new", "service": "hook",
                     "body": ["title": "{{item.title}}", "tags": "{{item.categories}}", "feed": "{{event.title}}", "n": 1]],
            "slack": ["on": "loader.blog.finished", "for": "new", "service": "slack", "body": ["text": "<{{item.link}}|{{item.title}}>"]],
        ]])
        return object
    }

    @Test func feedLoadersWebhookServicesAndRulesAreValid() throws {
        let data = try JSONSerialization.data(withJSONObject: Self.withFeeds)
        let configuration = try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(configuration.loaders["news"]?.kind == .feed(FeedSettings(location: .sandbox(path: "/feeds/news.rss"))))
        #expect(configuration.loaders["blog"]?.kind == .feed(FeedSettings(location: .url(URL(string: "https://example.com/feed.xml")!),
                                                                        timeout: .seconds(10), maxBytes: 2_000_000)))
        guard case .webhook(.sandbox, let secret?, let headers, let timeout)? = configuration.services["hook"] else {
            Issue.record("expected a webhook service with a secret")
            return
        }
        #expect(secret.key == Array(repeating: 42, count: 32))
        #expect(headers == ["X-Team": "ops", "Authorization": "Bearer abc"] && timeout == .seconds(20))
        #expect(configuration.secrets.contains(Self.secret) && configuration.secrets.contains("https://hooks.slack.com/services/T/B/X"))
        #expect(configuration.sandboxConfiguration().webhookSecret == secret.key)
        #expect(configuration.usesSandbox)
        guard case .post(let posting)? = configuration.subscribers["posts"], case .webhook(let body)? = posting.rules.first?.target else {
            Issue.record("expected a webhook rule")
            return
        }
        #expect(body.fieldPaths.map(\.description) == ["event.title", "item.categories", "item.title"])
    }

    @Test func aSecretThatIsNotBase64IsNamedWithItsPathAndNeverShown() {
        let object = ConfigFixtures.set(Self.withFeeds, "services.hook.secret", "whsec_this is not base64!")
        let issues = ConfigFixtures.issues(object)
        #expect(issues.count == 1)
        #expect(issues.first?.hasPrefix("services.hook.secret: the secret is not valid base64 after \"whsec_\"") == true, "\(issues)")
        #expect(issues.allSatisfy { !$0.contains("this is not base64") })
        let short = ConfigFixtures.set(Self.withFeeds, "services.hook.secret", "whsec_" + Data(count: 10).base64EncodedString())
        #expect(ConfigFixtures.issues(short).first?.contains("decodes to 10 bytes") == true)
        let bare = ConfigFixtures.set(Self.withFeeds, "services.hook.secret", "s3cr3t")
        #expect(ConfigFixtures.issues(bare).first?.hasPrefix("services.hook.secret: the secret does not start with \"whsec_\"") == true)
    }

    @Test func badFeedAndWebhookSettingsAreEachNamed() {
        var object = Self.withFeeds
        object = ConfigFixtures.set(object, "loaders.news.url", "sandbox:feeds")
        object = ConfigFixtures.set(object, "loaders.blog.url", "ftp://example.com/feed")
        object = ConfigFixtures.set(object, "loaders.blog.service", "hook")
        object = ConfigFixtures.set(object, "services.hook.headers.webhook-id", "mine")
        object = ConfigFixtures.set(object, "services.hook.headers.bad name", "x")
        object = ConfigFixtures.set(object, "services.slack.url", ["env": "NOT_SET"])
        #expect(ConfigFixtures.issues(object) == [
            "services.hook.headers.bad name: \"bad name\" is not a header name (letters, digits and !#$%&'*+-.^_`|~)",
            "services.hook.headers.webhook-id: set by Herald itself; it cannot be configured",
            "services.slack.url: environment variable NOT_SET is not set and there is no default",
            "loaders.blog.service: unknown key",
            "loaders.blog.url: \"ftp://example.com/feed\" is not \"sandbox\" or an http(s) URL",
            "loaders.news.url: \"sandbox:feeds\" is not a sandbox feed; write \"sandbox:/feeds/news.rss\" (a path after \"sandbox:\")",
        ])
    }

    @Test func webhookRulesNeedABodyOfTheirOwnAndKnownFields() {
        var object = ConfigFixtures.set(Self.withFeeds, "subscribers.posts.rules.hook.body", nil)
        object = ConfigFixtures.set(object, "subscribers.posts.rules.hook.text", "hi")
        object = ConfigFixtures.set(object, "subscribers.posts.rules.slack.body", ["text": "{{item.titel}}"])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.tweet", ["on": "loader.news.finished", "service": "twitter",
                                                                              "text": "x", "body": ["a": 1]])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.scalar", ["on": "loader.news.finished", "service": "hook", "body": "text"])
        #expect(ConfigFixtures.issues(object) == [
            "subscribers.posts.rules.hook.text: not for a webhook service; a webhook service delivers \"body\" (a JSON template)",
            "subscribers.posts.rules.hook.body: required: the JSON body to deliver, e.g. {\"text\": \"{{item.title}} {{item.link}}\"}",
            "subscribers.posts.rules.scalar.body: expected a JSON object or array (the body's template), got \"text\"",
            "subscribers.posts.rules.slack.body: \"item.titel\" is not a field of feed loader \"blog\"'s new items (author, categories, enclosures, id, link, published, summary, title)",
            "subscribers.posts.rules.tweet.body: only for a webhook service; \"service\" is a twitter service",
        ])
    }

    @Test func theSchemaKnowsTheFeedLoaderAndTheWebhookService() throws {
        let data = try Data(contentsOf: ConfigSchemaTests.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let service = try #require(definitions["webhookService"] as? [String: Any])
        #expect((service["properties"] as? [String: Any])?.keys.sorted() == ["caFile", "headers", "insecure", "kind", "secret", "timeout", "url"])
        let loader = try #require(definitions["feedLoader"] as? [String: Any])
        #expect((loader["properties"] as? [String: Any])?.keys.sorted() == ["backoff", "caFile", "every", "insecure", "jitter", "kind", "maxBytes", "timeout", "url"])
        let rule = try #require(definitions["postRule"] as? [String: Any])
        #expect((rule["properties"] as? [String: Any])?["body"] != nil)
    }
}
