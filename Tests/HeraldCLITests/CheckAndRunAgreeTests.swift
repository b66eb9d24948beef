import Foundation
import Testing
import HeraldTestSupport

/// One configuration that `herald run` cannot use: what it sets, and the issue both commands print.
struct BadConfig: Sendable, CustomTestStringConvertible {
    var services = #"{"tiqav": {"url": "sandbox"}}"#
    /// Sections after the others (`"http": …`), or none.
    var extra = ""
    /// The one issue's line, after the two spaces.
    var issue: String

    var testDescription: String { issue }

    static let cluster = #""node": "a", "connectWait": "1s""#

    static let corpus: [BadConfig] = [
        // What the HTTP server's inet_pton refuses.
        BadConfig(extra: #""http": {"listen": "127.0.0.01:8431"}"#,
                  issue: #"http.listen: "127.0.0.01" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)"#),
        BadConfig(extra: #""http": {"listen": "127.000.0.1:8431"}"#,
                  issue: #"http.listen: "127.000.0.1" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)"#),
        // The sandbox (a service uses it) and the status endpoint on one port: the second cannot listen.
        BadConfig(extra: #""sandbox": {"port": 8433}, "http": {"listen": "127.0.0.1:8433"}"#,
                  issue: "http.listen: port 8433 is sandbox.port too, where the embedded sandbox listens; give the endpoint another"),
        // Refused by both already; kept so they stay refused.
        BadConfig(extra: #""http": {"listen": "127.0.0.1:99999999999999999999999"}"#,
                  issue: #"http.listen: "127.0.0.1:99999999999999999999999" is not HOST:PORT (an IPv4 address and a port 0...65535, e.g. "127.0.0.1:8420")"#),
        BadConfig(extra: #""sandbox": {"port": 99999999999999999999999}"#, issue: "sandbox.port: expected an integer, got 1e+23"),
        // What the NATS client's address parser refuses.
        BadConfig(extra: #""cluster": {"servers": ["nats://127.0.0.1:99999999999999999999999"], \#(cluster)}"#,
                  issue: #"cluster.servers[0]: "nats://127.0.0.1:99999999999999999999999": the port is not in 1...65535"#),
        BadConfig(extra: #""cluster": {"servers": ["nats://127.0.0.1:"], \#(cluster)}"#,
                  issue: #"cluster.servers[0]: "nats://127.0.0.1:" is not a nats://host[:port] or tls://host[:port] URL"#),
        BadConfig(extra: #""cluster": {"servers": ["nats://127.0.0.1:4222#x"], \#(cluster)}"#,
                  issue: #"cluster.servers[0]: "nats://127.0.0.1:4222#x" is not a nats://host[:port] or tls://host[:port] URL"#),
        // One server twice (the default port is 4222).
        BadConfig(extra: #""cluster": {"servers": ["nats://127.0.0.1:4222", "nats://127.0.0.1:4222"], \#(cluster)}"#,
                  issue: #"cluster.servers[1]: "nats://127.0.0.1:4222" is the same server as cluster.servers[0]; list each server once"#),
        BadConfig(extra: #""cluster": {"servers": ["nats://Example.com", "nats://example.com:4222"], \#(cluster)}"#,
                  issue: #"cluster.servers[1]: "nats://example.com:4222" is the same server as cluster.servers[0]; list each server once"#),
        // A service's port the HTTP client cannot use (the first one went to port 80 instead).
        BadConfig(services: #"{"tiqav": {"url": "http://127.0.0.1:99999999999999999999999"}}"#,
                  issue: #"services.tiqav.url: "http://127.0.0.1:99999999999999999999999": the port is not in 1...65535"#),
        BadConfig(services: #"{"tiqav": {"url": "http://127.0.0.1:70000/"}}"#,
                  issue: #"services.tiqav.url: "http://127.0.0.1:70000/": the port is not in 1...65535"#),
        BadConfig(services: #"{"tiqav": {"url": "http://127.0.0.1:0"}}"#,
                  issue: #"services.tiqav.url: "http://127.0.0.1:0": the port is not in 1...65535"#),
    ]

    /// The whole configuration: a loader, an archive and the state directory beside the file.
    var text: String {
        """
        {
          "state": "state",
          "services": \(services),
          "loaders": {"images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}},
          "subscribers": {"archive": {"kind": "file", "path": "events.jsonl"}}\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
    }
}

/// `herald check` and `herald run` read a configuration through one validation: what `run`
/// cannot use, `check` refuses, with the same words, and `run` starts nothing.
@Suite struct CheckAndRunAgreeTests {
    static let herald = BuiltProducts.url(of: "herald")

    @Test(.timeLimit(.minutes(5)), arguments: BadConfig.corpus)
    func checkAndRunRefuseTheSameConfigurationAlike(config: BadConfig) async throws {
        let herald = try #require(Self.herald)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-agree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        try Data(config.text.utf8).write(to: file)

        let check = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        // A run that wrongly starts stops by itself rather than hang the test.
        let run = try #require(try await ChildProcess.run(herald, ["run", "--config", file.path, "--for", "3s"]))

        #expect(check.status == 2, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.isEmpty)
        #expect(check.stderr == "herald: \(file.path) is invalid (1 error):\n  \(config.issue)\n")
        #expect(run.status == check.status, "\(run.stderr)")
        #expect(run.stderr == check.stderr)
        #expect(run.stdout.isEmpty)
        // Nothing started: no state directory, no archive.
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("state").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("events.jsonl").path))
    }
}
