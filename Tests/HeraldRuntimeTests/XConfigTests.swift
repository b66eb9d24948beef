import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import Testing

/// `"api": "v2"` on a twitter service, its two kinds of auth, and timeline loaders on it.
@Suite struct XConfigTests {
    static var config: [String: Any] {
        var object = ConfigFixtures.demo
        object = ConfigFixtures.set(object, "services.x", [
            "kind": "twitter", "api": "v2", "url": "sandbox", "auth": ["bearer": ["env": "X_USER_TOKEN", "default": "sandbox-oauth2-user-token"]],
        ])
        object = ConfigFixtures.set(object, "loaders.xhome", ["kind": "timeline", "service": "x", "count": 50, "every": "1m"])
        object = ConfigFixtures.set(object, "loaders.xuser", ["kind": "timeline", "service": "x", "timeline": "user", "screenName": "sakura_dev",
                                                               "count": 5, "every": "1m"])
        object = ConfigFixtures.set(object, "loaders.xsearch", ["kind": "timeline", "service": "x", "timeline": "search", "query": "swift",
                                                                 "every": "1m"])
        return object
    }

    static func parse(_ object: [String: Any], environment: [String: String] = [:]) throws -> HeraldConfiguration {
        try ConfigLoader(environment: environment).parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
    }

    @Test func aV2ServiceWithABearerTokenFromTheEnvironmentAndItsTimelines() throws {
        let configuration = try Self.parse(Self.config, environment: ["X_USER_TOKEN": "from-env-token"])
        guard case .x(.sandbox, .bearer(let token), nil)? = configuration.services["x"] else {
            Issue.record("expected an X API v2 service")
            return
        }
        #expect(token == "from-env-token")
        #expect(configuration.secrets.contains("from-env-token"))
        #expect(configuration.services["x"]?.kind == "twitter")
        #expect(configuration.loaders["xhome"]?.kind == .xTimeline(.init(timeline: .home, maxResults: 50)))
        #expect(configuration.loaders["xuser"]?.kind == .xTimeline(.init(timeline: .user(username: "sakura_dev"), maxResults: 5)))
        #expect(configuration.loaders["xsearch"]?.kind == .xTimeline(.init(timeline: .search(query: "swift"))))
        #expect(configuration.loaders["xhome"]?.kind.name == "timeline")
        // The sandbox accepts the configured token.
        #expect(configuration.sandboxConfiguration().oauth2UserToken == "from-env-token")
        // v1.1 stays the default.
        guard case .twitter? = configuration.services["twitter"] else {
            Issue.record("the seeds' service must stay v1.1")
            return
        }
    }

    @Test func oauth1UserContextOnV2() throws {
        var object = ConfigFixtures.demo(setting: "services.twitter.api", to: "v2")
        object = ConfigFixtures.set(object, "loaders.itmedia.format", "json")
        let configuration = try Self.parse(object)
        guard case .x(.sandbox, .oauth1(let credentials), nil)? = configuration.services["twitter"] else {
            Issue.record("expected an X API v2 service with OAuth 1.0a")
            return
        }
        #expect(credentials.consumerKey == "sandbox")
        #expect(configuration.loaders["itmedia"]?.kind == .xTimeline(.init(timeline: .user(username: "itmedia"))))
        #expect(configuration.sandboxConfiguration().credentials.tokenSecret == "sandbox-token-secret")
    }

    @Test func problemsAreReportedWithTheirPaths() {
        let issues = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "services.x.api", "v3"))
        #expect(issues.contains { $0.hasPrefix("services.x.api:") && $0.contains("v1.1") && $0.contains("v2") })

        let mixed = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "services.x.auth", ["bearer": "t", "consumerKey": "k"]))
        #expect(mixed.contains { $0.hasPrefix("services.x.auth:") && $0.contains("not both") })

        let typo = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "services.x.auth", ["berer": "t"]))
        #expect(typo.contains("services.x.auth.berer: unknown key (did you mean \"bearer\"?)"))

        var unset = Self.config
        unset = ConfigFixtures.set(unset, "services.x.auth", ["bearer": ["env": "NOT_SET_ANYWHERE"]])
        #expect(ConfigFixtures.issues(unset).contains("services.x.auth.bearer: environment variable NOT_SET_ANYWHERE is not set and there is no default"))

        let noAuth = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "services.x.auth", nil))
        #expect(noAuth.contains { $0.hasPrefix("services.x.auth: required") })

        let range = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "loaders.xsearch.count", 5))
        #expect(range.contains { $0.hasPrefix("loaders.xsearch.count:") })

        let xml = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "loaders.xhome.format", "xml"))
        #expect(xml.contains("loaders.xhome.format: X API v2 answers JSON only"))

        let noQuery = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "loaders.xsearch.query", nil))
        #expect(noQuery.contains("loaders.xsearch.query: required"))

        let v1Query = ConfigFixtures.issues(ConfigFixtures.demo(setting: "loaders.home.query", to: "swift"))
        #expect(v1Query.contains { $0.hasPrefix("loaders.home.query: only for a timeline on a twitter service with \"api\": \"v2\"") })

        let v1Search = ConfigFixtures.issues(ConfigFixtures.demo(setting: "loaders.home.timeline", to: "search"))
        #expect(v1Search.contains { $0.hasPrefix("loaders.home.timeline:") })
    }

    @Test func aSecretNeverAppearsInAnError() {
        let issues = ConfigFixtures.issues(ConfigFixtures.set(Self.config, "services.x.auth", ["bearer": 12345.0]))
        #expect(issues.contains { $0.hasPrefix("services.x.auth.bearer:") })
        #expect(!issues.joined().contains("12345"))
    }

    @Test func postRulesOnAV2ServiceAndItsTimelineFieldsValidate() {
        var object = Self.config
        object = ConfigFixtures.set(object, "subscribers.posts", ["kind": "post", "rules": [
            "cross": ["on": "loader.xhome.finished", "for": "new", "service": "x", "text": "{{user.screen_name}}: {{text}}"],
        ]])
        #expect(ConfigFixtures.issues(object) == [])
        object = ConfigFixtures.set(object, "subscribers.posts.rules.cross.text", "{{nope}}")
        #expect(ConfigFixtures.issues(object).contains { $0.hasPrefix("subscribers.posts.rules.cross.text: \"nope\" is not a field") })
    }

    @Test func theSchemaKnowsTheV2Keys() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("config.schema.json"))) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let twitter = try #require((definitions["twitterService"] as? [String: Any])?["properties"] as? [String: Any])
        #expect((twitter["api"] as? [String: Any])?["enum"] as? [String] == ["v1.1", "v2"])
        let auth = try #require((twitter["auth"] as? [String: Any])?["oneOf"] as? [[String: Any]])
        #expect(auth.contains { ($0["required"] as? [String]) == ["bearer"] })
        let timeline = try #require((definitions["timelineLoader"] as? [String: Any])?["properties"] as? [String: Any])
        #expect((timeline["timeline"] as? [String: Any])?["enum"] as? [String] == ["home", "user", "search"])
        #expect(timeline["query"] != nil)
    }
}
