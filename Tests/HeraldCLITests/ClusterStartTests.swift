import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

@Suite struct ClusterStartTests {
    /// A daemon with a cluster section whose servers cannot be used stops with one line naming
    /// the cluster and exits 1, before any loader pulls (no lease can be taken).
    @Test(.timeLimit(.minutes(5)))
    func aClusterThatCannotBeReachedAtStartIsAClearErrorAndExit1() async throws {
        let herald = try #require(RunCommandTests.herald)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Port 1 on loopback: nothing listens there, so every connection is refused.
        let config = try Self.shippedConfig(in: directory, cluster: ["servers": ["nats://127.0.0.1:1"], "node": "a", "connectWait": "0ms"])

        let result = try #require(try await ChildProcess.run(herald, ["run", "--config", config.path, "--for", "1m"]))
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("herald: cluster.connection: cluster: ") }, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("loader.home.finished"))
    }
}

extension ClusterStartTests {
    /// The shipped config.json with `cluster` as its cluster section (with an intent secret unless
    /// it names one), written in `directory`.
    static func shippedConfig(in directory: URL, cluster: [String: Any], logsCluster: Bool = false) throws -> URL {
        let shipped = try Data(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("config.json"))
        var object = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
        if logsCluster, var subscribers = object["subscribers"] as? [String: Any], var console = subscribers["console"] as? [String: Any] {
            console["topics"] = ((console["topics"] as? [String]) ?? []) + ["cluster.>"]
            subscribers["console"] = console
            object["subscribers"] = subscribers
        }
        object["$schema"] = nil
        object["state"] = directory.appendingPathComponent("state").path
        var cluster = cluster
        // The shipped config posts: a cluster needs the intent secret then.
        if cluster["intentSecret"] == nil { cluster["intentSecret"] = "a-test-intent-secret-of-at-least-32-bytes" }
        object["cluster"] = cluster
        object["http"] = ["listen": "127.0.0.1:0"]   // a free port: tests run side by side
        let config = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: object).write(to: config)
        return config
    }

    /// SIGTERM or SIGINT while the node waits for NATS stops it at once with exit 0, however long
    /// the connect wait (an hour here; `startup: wait` would wait for ever). Before: "stopping",
    /// then the signal was ignored for the whole wait, and only a second one stopped it (exit 1).
    /// Nothing listens on port 1 (every attempt is refused at once); the silent server accepts and
    /// never answers (the signal comes during an attempt).
    @Test(.timeLimit(.minutes(10)), arguments: ["refused", "silent"])
    func aSignalWhileTheNodeWaitsForNATSStopsItAtOnceWithExit0(_ server: String) async throws {
        let herald = try #require(RunCommandTests.herald)
        let silent = server == "silent" ? try FakeNATSServer(greeting: .silent) { session in session.readToEnd() } : nil
        defer { silent?.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.shippedConfig(in: directory, cluster: [
            "servers": [silent?.url ?? "nats://127.0.0.1:1"], "node": "a", "connectWait": "1h", "startup": silent == nil ? "fail" : "wait",
        ], logsCluster: true)
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        let waiting = await child.waitForStandardError { $0.contains("cluster: waiting: ") }
        #expect(waiting, "stderr: \(child.stderr)")
        if let silent { await silent.waitForConnections(2) }
        child.signal(silent == nil ? SIGTERM : SIGINT)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("herald: stopping\n") && result.stderr.contains("herald: stopped"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("stopping at once"))
    }

    /// A stream that exists with other settings than the cluster section's is not changed: the
    /// daemon stops with one line naming the stream and the difference, and exits 1.
    @Test(.timeLimit(.minutes(5)), .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
    func aStreamThatExistsWithOtherSettingsIsAClearErrorAndExit1() async throws {
        let herald = try #require(RunCommandTests.herald)
        let server = try await NATSServerProcess.start()
        let connection = try NATSConnection(servers: [server.url], name: "other-program")
        try await connection.connect()
        var other = StreamConfiguration(name: "HERALD", subjects: ["herald.>"], storage: .file, replicas: 1)
        other.maxAge = .seconds(60)
        other.duplicateWindow = .seconds(60)
        _ = try await connection.jetStream(timeout: .seconds(60)).createStream(other)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.shippedConfig(in: directory, cluster: ["servers": [server.url], "node": "a", "connectWait": "2m"])
        let result = try #require(try await ChildProcess.run(herald, ["run", "--config", config.path, "--for", "1m"]))
        #expect(result.status == 1)
        #expect(result.stderr.contains("herald: cluster.connection: cluster: the stream HERALD exists with other settings: max age 60.0 seconds (this node wants 86400.0 seconds), dedupe window 60.0 seconds (this node wants 120.0 seconds)"),
                "stderr: \(result.stderr)")
        #expect(try await connection.jetStream(timeout: .seconds(60)).streamInfo("HERALD").config.maxAge == .seconds(60))
        await connection.close()
        await server.stop()
    }
}
