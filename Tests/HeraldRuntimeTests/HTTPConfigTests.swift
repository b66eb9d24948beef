import Foundation
import HeraldRuntime
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `http` section: HOST:PORT, loopback unless asked otherwise, every problem by its path.
@Suite struct HTTPConfigTests {
    static func parse(_ http: Any?) throws -> HeraldConfiguration {
        let object = ConfigFixtures.demo(setting: "http", to: http)
        return try ConfigLoader(environment: [:]).parse(try JSONSerialization.data(withJSONObject: object),
                                                        baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
    }

    @Test func withoutTheSectionThereIsNoEndpoint() throws {
        #expect(try Self.parse(nil).http == nil)
    }

    @Test func aLoopbackAddressIsTakenAsWritten() throws {
        #expect(try Self.parse(["listen": "127.0.0.1:8420"]).http == HTTPSettings(host: "127.0.0.1", port: 8420))
        #expect(try Self.parse(["listen": "localhost:0"]).http == HTTPSettings(host: "127.0.0.1", port: 0))
        #expect(try Self.parse(["listen": "127.0.0.2:9"]).http == HTTPSettings(host: "127.0.0.2", port: 9))
    }

    @Test func aNonLoopbackAddressMustBeAskedFor() throws {
        #expect(ConfigFixtures.issues(ConfigFixtures.demo(setting: "http", to: ["listen": "0.0.0.0:8420"])) == [
            "http.listen: 0.0.0.0 is not a loopback address; the endpoint has no authentication and streams every event, "
                + "so serving other machines must be asked for with \"allowRemote\": true",
        ])
        #expect(try Self.parse(["listen": "0.0.0.0:8420", "allowRemote": true]).http
                == HTTPSettings(host: "0.0.0.0", port: 8420, allowRemote: true))
    }

    /// (the section as JSON, the issues)
    @Test(arguments: [
        (#"{"listen": "127.0.0.1"}"#, [#"http.listen: "127.0.0.1" is not HOST:PORT (an IPv4 address and a port 0...65535, e.g. "127.0.0.1:8420")"#]),
        (#"{"listen": "127.0.0.1:70000"}"#, [#"http.listen: "127.0.0.1:70000" is not HOST:PORT (an IPv4 address and a port 0...65535, e.g. "127.0.0.1:8420")"#]),
        (#"{"listen": "127.0.0.1:-1"}"#, [#"http.listen: "127.0.0.1:-1" is not HOST:PORT (an IPv4 address and a port 0...65535, e.g. "127.0.0.1:8420")"#]),
        (#"{"listen": "example.com:80"}"#, [#"http.listen: "example.com" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)"#]),
        (#"{"listen": "127.0.0.256:80"}"#, [#"http.listen: "127.0.0.256" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)"#]),
        (#"{"listen": 8420}"#, ["http.listen: expected a string, got 8420"]),
        ("{}", ["http.listen: required"]),
        (#"{"listen": "127.0.0.1:1", "allowRemote": "yes"}"#, [#"http.allowRemote: expected true or false, got "yes""#]),
        (#"{"listen": "127.0.0.1:1", "lisen": "x"}"#, [#"http.lisen: unknown key (did you mean "listen"?)"#]),
        ("[]", ["http: expected an object, got an array"]),
    ])
    func badSectionsAreReportedByPath(section: String, issues: [String]) throws {
        let value = try JSONSerialization.jsonObject(with: Data(section.utf8))
        #expect(ConfigFixtures.issues(ConfigFixtures.demo(setting: "http", to: value)) == issues)
    }

    /// The endpoint binds with `inet_pton`: a host the configuration takes, it takes, so
    /// `herald check` never passes a listen address `herald run` cannot bind.
    @Test(arguments: ["127.0.0.1", "0.0.0.0", "10.20.30.40", "255.255.255.255", "127.0.0.01", "127.000.0.1", "0127.0.0.1",
                      "127.0.0.00", "127.0.0.256", "127.1", "127.0.0.1.", ".127.0.0.1", "127..0.1", "127.0.0.1 ", "1.2.3.4.5", "١٢٧.0.0.1"])
    func aHostIsAnAddressExactlyWhenTheEndpointCanBindIt(host: String) throws {
        var address = in_addr()
        let binds = inet_pton(AF_INET, host, &address) == 1
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: "http", to: ["listen": "\(host):8420", "allowRemote": true]))
        #expect(issues.isEmpty == binds, "\(issues)")
        if !binds {
            #expect(issues == [#"http.listen: "\#(host)" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)"#])
        }
    }

    @Test func theShippedConfigServesTheEndpointOnALoopbackPort() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try ConfigLoader(environment: [:]).load(contentsOf: root.appendingPathComponent("config.json"))
        let http = try #require(configuration.http)
        #expect(HTTPSettings.isLoopback(http.host))
        #expect(http.port == 8420)
    }

    @Test func theSchemaDescribesTheSection() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("config.schema.json"))) as? [String: Any]
        let http = (schema?["properties"] as? [String: Any])?["http"] as? [String: Any]
        #expect(http?["required"] as? [String] == ["listen"])
        #expect(((http?["properties"] as? [String: Any])?.keys.sorted()) == ["allowRemote", "listen"])
    }
}
