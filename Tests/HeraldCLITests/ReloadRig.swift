import Foundation
import HeraldSync
import Testing
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A directory with a config.json a test rewrites, and the herald it runs (a real child process).
struct ReloadRig {
    let directory: URL
    var config: URL { directory.appendingPathComponent("config.json") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes config.json: the given services and loaders, a log on standard error and an
    /// archive of every event, the status endpoint on a free port.
    func write(services: String = #""tiqav": {"url": "sandbox"}, "baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}"#,
               loaders: String, extraSubscribers: String = "") throws {
        let text = """
            {
              "state": "var/state",
              "services": {\(services)},
              "loaders": {\(loaders)},
              "subscribers": {
                "console": {"kind": "log", "topics": [">"], "level": "info"},
                "archive": {"kind": "file", "topics": [">"], "path": "var/events.jsonl"}\(extraSubscribers)
              },
              "sandbox": {"statusInterval": "1h"},
              "http": {"listen": "127.0.0.1:0"}
            }
            """
        try writeRaw(text)
    }

    /// Writes config.json as given (atomically, as an editor saving would).
    func writeRaw(_ text: String) throws {
        try text.write(to: config, atomically: true, encoding: .utf8)
    }

    /// The archive's lines so far.
    var archive: String {
        (try? String(contentsOf: directory.appendingPathComponent("var/events.jsonl"), encoding: .utf8)) ?? ""
    }

    /// Starts `herald run` on the config and waits until it runs; returns it and its status URL.
    func start(environment: [String: String]? = nil) async throws -> (ChildProcess, String) {
        let herald = try #require(BuiltProducts.url(of: "herald"))
        // Never the test runner's own service manager (CI may run under systemd).
        var inherited = ProcessInfo.processInfo.environment
        inherited["NOTIFY_SOCKET"] = nil
        inherited["WATCHDOG_USEC"] = nil
        let child = try ChildProcess(herald, ["run", "--config", config.path], in: directory, environment: environment ?? inherited)
        #expect(await child.waitForStandardError { $0.contains("herald: running") }, "\(child.stderr)")
        let line = try #require(child.stderr.split(separator: "\n").first { $0.hasPrefix("herald: status at http://127.0.0.1:") })
        let url = try #require(line.split(separator: " ").dropFirst(3).first.map(String.init))
        return (child, url)
    }

    /// Runs `herald reload --url url` to its end.
    func reload(_ url: String) async throws -> ChildProcess.Finished {
        let herald = try #require(BuiltProducts.url(of: "herald"))
        return try #require(try await ChildProcess.run(herald, ["reload", "--url", url]))
    }
}
