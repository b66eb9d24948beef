import Foundation
import HeraldCluster
import HeraldRuntime
import Testing

@Suite struct ClusterConfigTests {
    private func parse(_ cluster: Any) throws -> HeraldConfiguration {
        let object = ConfigFixtures.demo(setting: "cluster", to: cluster)
        let data = try JSONSerialization.data(withJSONObject: object)
        return try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
    }

    @Test func noClusterSectionMeansAlone() throws {
        let data = try JSONSerialization.data(withJSONObject: ConfigFixtures.demo)
        let configuration = try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(configuration.cluster == nil)
    }

    @Test func theIssuesExampleDecodesWithTheDocumentedDefaults() throws {
        let configuration = try parse(["servers": ["nats://127.0.0.1:4222", "nats://10.0.0.2"], "node": "a", "export": [">"],
                                       "stream": "HERALD", "replicas": 1, "leaseTTL": "15s"])
        let cluster = try #require(configuration.cluster)
        #expect(cluster.servers.map(\.absoluteString) == ["nats://127.0.0.1:4222", "nats://10.0.0.2"])
        #expect(cluster.node == "a")
        #expect(cluster.export == [">"])
        #expect(cluster.stream == "HERALD" && cluster.postStream == "HERALD_POSTS")
        #expect(cluster.leaseBucket == "herald_leases" && cluster.stateBucket == "herald_state")
        #expect(cluster.leaseTTL == .seconds(15) && cluster.ackWait == .seconds(30) && cluster.dedupeWindow == .seconds(120))
        #expect(cluster.maxAge == .seconds(86_400) && cluster.startup == .fail && cluster.connectWait == .seconds(10))
        #expect(cluster.maxPayload == 8 * 1024 * 1024)
    }

    @Test func everySettingIsRead() throws {
        let configuration = try parse(["servers": ["nats://a:1", "nats://b:2", "nats://c:3"], "node": "tokyo-1", "export": ["loader.>"],
                                       "stream": "EV", "replicas": 3, "leaseTTL": "2s", "dedupeWindow": "5s", "maxAge": "1h",
                                       "ackWait": "3s", "postStream": "PQ", "leaseBucket": "l", "stateBucket": "s",
                                       "startup": "wait", "connectWait": "0ms", "maxPayload": 16_777_216])
        let cluster = try #require(configuration.cluster)
        #expect(cluster.replicas == 3 && cluster.stream == "EV" && cluster.postStream == "PQ")
        #expect(cluster.leaseTTL == .seconds(2) && cluster.dedupeWindow == .seconds(5) && cluster.maxAge == .seconds(3600))
        #expect(cluster.ackWait == .seconds(3) && cluster.leaseBucket == "l" && cluster.stateBucket == "s")
        #expect(cluster.startup == .wait && cluster.connectWait == .zero && cluster.export == ["loader.>"])
        #expect(cluster.maxPayload == 16_777_216)
    }

    @Test func everyProblemIsReportedWithItsPath() {
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: [
            "servers": ["http://x", "nats://u:secret@h:4222", 7, "nats://h:99999"], "node": "external", "export": ["a..b"],
            "stream": "HER ALD", "replicas": 9, "leaseTTL": "10ms", "ackWait": "soon", "leaseBucket": "x", "stateBucket": "x",
            "startup": "maybe", "bogus": 1, "maxPayload": 100,
        ]))
        #expect(issues.contains("cluster.bogus: unknown key"))
        #expect(issues.contains("cluster.servers[0]: \"http://x\" is not a nats://host[:port] or tls://host[:port] URL"))
        #expect(issues.contains("cluster.servers[1]: credentials in a server URL are not supported"))
        #expect(!issues.joined().contains("secret"))
        #expect(issues.contains("cluster.servers[2]: expected a nats:// URL, got 7"))
        #expect(issues.contains { $0.hasPrefix("cluster.servers[3]: ") })
        #expect(issues.contains { $0.hasPrefix("cluster.node: \"external\" is not a node name") })
        #expect(issues.contains("cluster.export[0]: \"a..b\" is not a topic pattern"))
        #expect(issues.contains("cluster.stream: \"HER ALD\" is not a JetStream name (letters, digits, - and _, at most 32)"))
        #expect(issues.contains("cluster.replicas: 9 is not in 1...5"))
        #expect(issues.contains("cluster.leaseTTL: 10ms is below the minimum of 1s"))
        #expect(issues.contains("cluster.ackWait: \"soon\" is not a duration"))
        #expect(issues.contains("cluster.stateBucket: must differ from cluster.leaseBucket (\"x\"): leases expire, states must not"))
        #expect(issues.contains("cluster.startup: \"maybe\" is not one of fail, wait"))
        #expect(issues.contains("cluster.maxPayload: 100 is not in 1024...67108864"))
    }

    @Test func requiredKeysAndCrossChecks() {
        let missing = ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: [String: Any]()))
        #expect(missing.contains("cluster.servers: required (for example [\"nats://127.0.0.1:4222\"])"))
        #expect(missing.contains("cluster.node: required"))
        let crossed = ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: [
            "servers": ["nats://a:1"], "node": "a", "replicas": 3, "dedupeWindow": "2h", "maxAge": "1h", "postStream": "HERALD",
        ]))
        #expect(crossed.contains("cluster.replicas: 3 copies need at least 3 servers in cluster.servers (1 listed)"))
        #expect(crossed.contains("cluster.dedupeWindow: 2h is longer than cluster.maxAge (1h); JetStream refuses that"))
        #expect(crossed.contains("cluster.postStream: must differ from cluster.stream (\"HERALD\")"))
        let notObject = ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: "nats://a"))
        #expect(notObject.contains { $0.hasPrefix("cluster: expected an object") })
    }
}

@Suite struct ClusterSchemaTests {
    /// The schema names every key the validator reads in `cluster`, and requires the same two.
    @Test func theSchemaDescribesTheClusterSection() throws {
        let data = try Data(contentsOf: ConfigSchemaTests.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cluster = try #require((schema["properties"] as? [String: Any])?["cluster"] as? [String: Any])
        let keys = try #require(cluster["properties"] as? [String: Any]).keys.sorted()
        #expect(keys == ["ackWait", "auth", "connectWait", "dedupeWindow", "export", "intentSecret", "leaseBucket", "leaseTTL", "maxAge",
                         "maxPayload", "mediaDirectory", "node", "postStream", "replicas", "servers", "startup", "stateBucket", "stream", "tls"])
        #expect((cluster["required"] as? [String])?.sorted() == ["node", "servers"])
        // Every key the schema names is one the validator accepts.
        var settings: [String: Any] = ["servers": ["nats://127.0.0.1:4222"], "node": "a"]
        for key in keys where settings[key] == nil { settings[key] = ["intentSecret", "auth", "tls"].contains(key) ? 7 : ["bogus": true] }
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: settings))
        #expect(!issues.contains { $0.contains("unknown key") })
        #expect(issues.count == keys.count - 2)
    }

    // MARK: Intents between nodes

    private static var cluster: [String: Any] { ["servers": ["nats://127.0.0.1:4222"], "node": "a"] }
    private static let secret = "an-intent-secret-of-32-bytes-or-more"

    @Test func postRulesInAClusterNeedTheIntentSecretOfAtLeast32BytesNeverShown() throws {
        let posting = ConfigFixtures.set(ConfigFixtures.withPosts, "cluster", Self.cluster)
        let missing = ConfigFixtures.issues(posting)
        #expect(missing.count == 1)
        #expect(missing.first?.hasPrefix("cluster.intentSecret: required: post rules (store) run in the cluster") == true, "\(missing)")
        let short = ConfigFixtures.issues(ConfigFixtures.set(posting, "cluster.intentSecret", "short-but-secret"))
        #expect(short == ["cluster.intentSecret: shorter than 32 bytes; make one with `openssl rand -base64 32`"])
        #expect(!short.joined().contains("short-but-secret"))
        // Without post rules no intent crosses the cluster: no secret is needed.
        #expect(ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: Self.cluster)) == [])

        let fromEnvironment = ConfigFixtures.set(posting, "cluster.intentSecret", ["env": "HERALD_CLUSTER_SECRET"])
        let data = try JSONSerialization.data(withJSONObject: fromEnvironment)
        let configuration = try ConfigLoader(environment: ["HERALD_CLUSTER_SECRET": Self.secret])
            .parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(configuration.cluster?.intentSecret == Self.secret)
        #expect(configuration.cluster?.mediaDirectory == nil)
        #expect(configuration.secrets.contains(Self.secret))
    }

    @Test func aRulePostingMediaInAClusterNeedsTheMediaDirectoryAndAFileInsideIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for folder in ["media", "private"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
            try Data("video".utf8).write(to: directory.appendingPathComponent("\(folder)/clip.mp4"))
        }
        func issues(media: Any, mediaDirectory: String?) throws -> [String] {
            var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.tweet.media", media)
            var cluster = Self.cluster
            cluster["intentSecret"] = Self.secret
            cluster["mediaDirectory"] = mediaDirectory
            object = ConfigFixtures.set(object, "cluster", cluster)
            let data = try JSONSerialization.data(withJSONObject: object)
            do {
                _ = try ConfigLoader(environment: [:]).parse(data, baseDirectory: directory)
                return []
            } catch {
                return error.issues.map(\.description)
            }
        }
        #expect(try issues(media: ["field": "item.video"], mediaDirectory: nil)
            == ["cluster.mediaDirectory: required: rule tweet posts media, and a cluster node reads media named by the post queue only from this directory"])
        #expect(try issues(media: "private/clip.mp4", mediaDirectory: "media")
            == ["cluster.mediaDirectory: rule tweet posts private/clip.mp4, which is outside \(directory.appendingPathComponent("media").path): a node would refuse it"])
        #expect(try issues(media: "media/../private/clip.mp4", mediaDirectory: "media").count == 1)
        #expect(try issues(media: "media/clip.mp4", mediaDirectory: "media") == [])
        #expect(try issues(media: ["field": "item.video"], mediaDirectory: "") == ["cluster.mediaDirectory: must not be empty"])
    }
}
