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
        for kind in ["twitterService", "tiqavService", "baasService", "mastodonService"] {
            let properties = try #require((definitions[kind] as? [String: Any])?["properties"] as? [String: Any])
            #expect(properties["caFile"] != nil && properties["insecure"] != nil, "\(kind) lacks caFile or insecure")
        }
        #expect((definitions["insecure"] as? [String: Any])?["type"] as? String == "boolean")
    }
}
