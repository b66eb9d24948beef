import Foundation
import HeraldIO
import HeraldRuntime
import Testing

/// A service's `caFile` and `insecure`: how an https service is verified, every problem by its
/// JSON path, and `insecure` never silent.
@Suite struct ServiceTLSConfigTests {
    static let base = URL(fileURLWithPath: "/tmp/herald")

    static func config(_ tiqav: [String: Any]) -> [String: Any] {
        ["services": ["tiqav": tiqav], "loaders": [:] as [String: Any]]
    }

    static func parse(_ tiqav: [String: Any], base: URL = base) throws -> HeraldConfiguration {
        try ConfigLoader(environment: [:]).parse(try JSONSerialization.data(withJSONObject: config(tiqav)), baseDirectory: base)
    }

    @Test func aServiceWithoutEitherIsVerifiedAgainstTheSystemStore() throws {
        let configuration = try Self.parse(["url": "https://api.example.com"])
        #expect(configuration.serviceTLS.isEmpty)
        #expect(configuration.warnings.isEmpty)
    }

    @Test func aCAFileIsResolvedAgainstTheConfigDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tls-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("certs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: directory.appendingPathComponent("certs/ca.pem"))
        let configuration = try Self.parse(["url": "https://api.example.com", "caFile": "certs/ca.pem"], base: directory)
        #expect(configuration.serviceTLS["tiqav"] == TLSConfiguration(caFile: directory.appendingPathComponent("certs/ca.pem").path))
        #expect(configuration.warnings.isEmpty)
    }

    @Test func insecureIsTakenOnlyExplicitlyAndWarnedAbout() throws {
        let configuration = try Self.parse(["url": "https://api.example.com", "insecure": true])
        #expect(configuration.serviceTLS["tiqav"]?.insecure == true)
        #expect(configuration.warnings.count == 1)
        #expect(configuration.warnings.first?.hasPrefix("services.tiqav.insecure: certificate and host-name verification are off") == true)
        let off = try Self.parse(["url": "https://api.example.com", "insecure": false])
        #expect(off.serviceTLS["tiqav"]?.insecure == false)
        #expect(off.warnings.isEmpty)
    }

    /// (the service's TLS keys as JSON, the issues)
    @Test(arguments: [
        (#"{"url": "https://a.example", "caFile": "/no/such/ca.pem"}"#, ["services.tiqav.caFile: no file at /no/such/ca.pem"]),
        (#"{"url": "https://a.example", "caFile": "/tmp"}"#, ["services.tiqav.caFile: no file at /tmp"]),
        (#"{"url": "https://a.example", "caFile": 3}"#, ["services.tiqav.caFile: expected a string, got 3"]),
        (#"{"url": "https://a.example", "insecure": "yes"}"#, [#"services.tiqav.insecure: expected true or false, got "yes""#]),
        (#"{"url": "https://a.example", "insecure": true, "caFile": "/etc/hostname"}"#,
         ["services.tiqav.insecure: cannot be true with a caFile: the caFile is for verifying, insecure turns verifying off"]),
        (#"{"url": "sandbox", "insecure": true}"#, ["services.tiqav.insecure: applies to https only, and the url is the sandbox (plain http)"]),
        (#"{"url": "http://a.example", "caFile": "/etc/hostname"}"#, ["services.tiqav.caFile: applies to https only, and the url is http://a.example"]),
        (#"{"url": "https://a.example", "insecur": true}"#, [#"services.tiqav.insecur: unknown key (did you mean "insecure"?)"#]),
    ])
    func badSettingsAreReportedByPath(service: String, issues: [String]) throws {
        let value = try #require(try JSONSerialization.jsonObject(with: Data(service.utf8)) as? [String: Any])
        let data = try JSONSerialization.data(withJSONObject: Self.config(value))
        var found: [String] = []
        do {
            _ = try ConfigLoader(environment: [:]).parse(data, baseDirectory: Self.base)
        } catch {
            found = error.issues.map(\.description)
        }
        #expect(found == issues)
    }

    @Test func everyServiceKindTakesBothInTheSchema() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("config.schema.json"))) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        for kind in ["twitterService", "tiqavService", "baasService", "mastodonService", "webhookService", "feedLoader"] {
            let properties = try #require((definitions[kind] as? [String: Any])?["properties"] as? [String: Any])
            #expect(properties["caFile"] != nil && properties["insecure"] != nil, "\(kind) lacks caFile or insecure")
        }
        #expect((definitions["insecure"] as? [String: Any])?["type"] as? String == "boolean")
    }

    /// A webhook service and a feed loader, each with the TLS settings `tls` (JSON).
    static func feedAndWebhook(_ tls: [String: Any], feedURL: String = "https://feeds.example/atom.xml",
                               hookURL: Any = "https://hooks.example/herald") -> [String: Any] {
        ["services": ["hook": ["kind": "webhook", "url": hookURL].merging(tls) { $1 }],
         "loaders": ["blog": ["kind": "feed", "url": feedURL, "every": "15m"].merging(tls) { $1 }]]
    }

    static func parse(object: [String: Any], base: URL = base, environment: [String: String] = [:]) throws -> HeraldConfiguration {
        try ConfigLoader(environment: environment).parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: base)
    }

    @Test func aWebhookServiceAndAFeedLoaderTakeACAFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tls-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: directory.appendingPathComponent("ca.pem"))
        let configuration = try Self.parse(object: Self.feedAndWebhook(["caFile": "ca.pem"]), base: directory)
        let expected = TLSConfiguration(caFile: directory.appendingPathComponent("ca.pem").path)
        #expect(configuration.serviceTLS["hook"] == expected)
        guard case .feed(let feed)? = configuration.loaders["blog"]?.kind else {
            Issue.record("expected a feed loader")
            return
        }
        #expect(feed.tls == expected)
        #expect(configuration.warnings.isEmpty)
    }

    @Test func insecureOnAWebhookServiceOrAFeedLoaderIsWarnedAbout() throws {
        // The webhook's URL is a credential from the environment; insecure still applies.
        let object = Self.feedAndWebhook(["insecure": true], hookURL: ["env": "HOOK_URL"])
        let configuration = try Self.parse(object: object, environment: ["HOOK_URL": "https://hooks.example/T/secret-token"])
        #expect(configuration.serviceTLS["hook"]?.insecure == true)
        #expect(configuration.warnings.count == 2, "\(configuration.warnings)")
        #expect(configuration.warnings.first?.hasPrefix("services.hook.insecure: certificate and host-name verification are off") == true)
        #expect(configuration.warnings.last?.hasPrefix("loaders.blog.insecure: certificate and host-name verification are off for this feed") == true)
        #expect(configuration.warnings.allSatisfy { !$0.contains("secret-token") })
    }

    @Test func badTLSSettingsOfAFeedLoaderAreReportedByPath() throws {
        func issues(_ object: [String: Any]) throws -> [String] {
            let data = try JSONSerialization.data(withJSONObject: object)
            do {
                _ = try ConfigLoader(environment: [:]).parse(data, baseDirectory: Self.base)
                return []
            } catch {
                return error.issues.map(\.description)
            }
        }
        let onSandbox = Self.feedAndWebhook(["insecure": true], feedURL: "sandbox:/feeds/news.rss", hookURL: "sandbox")
        #expect(try issues(onSandbox) == [
            "services.hook.insecure: applies to https only, and the url is the sandbox (plain http)",
            "loaders.blog.insecure: applies to https only, and the url is the sandbox (plain http)",
        ])
        let both = Self.feedAndWebhook(["insecure": true, "caFile": "/no/such/ca.pem"])
        #expect(try issues(both) == [
            "services.hook.caFile: no file at /no/such/ca.pem",
            "services.hook.insecure: cannot be true with a caFile: the caFile is for verifying, insecure turns verifying off",
            "loaders.blog.caFile: no file at /no/such/ca.pem",
            "loaders.blog.insecure: cannot be true with a caFile: the caFile is for verifying, insecure turns verifying off",
        ])
        let plain = Self.feedAndWebhook(["insecure": "yes"], feedURL: "http://feeds.example/rss")
        #expect(try issues(plain) == [
            #"services.hook.insecure: expected true or false, got "yes""#,
            #"loaders.blog.insecure: expected true or false, got "yes""#,
            "loaders.blog.insecure: applies to https only, and the url is http://feeds.example/rss",
        ])
    }
}
