import Foundation
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
        let shipped = try Data(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("config.json"))
        var object = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
        object["$schema"] = nil
        // Port 1 on loopback: nothing listens there, so every connection is refused.
        object["cluster"] = ["servers": ["nats://127.0.0.1:1"], "node": "a", "connectWait": "0ms"]
        let config = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: object).write(to: config)

        let result = try #require(try await ChildProcess.run(herald, ["run", "--config", config.path, "--for", "1m"]))
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("herald: cluster.connection: cluster: ") }, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("loader.home.finished"))
    }
}
