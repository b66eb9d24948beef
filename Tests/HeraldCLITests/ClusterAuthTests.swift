import Foundation
import HeraldTestSupport
import Testing

/// A node authenticates to a nats-server that wants an NKey (the seed from the environment, as an
/// operator would write it): with its key it runs; with a key the server does not know it stops
/// with the server's refusal and exit 1, and the seed is shown nowhere.
@Suite(.timeLimit(.minutes(5)), .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct ClusterAuthTests {
    /// Public key UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME (as the nkeys library computes it).
    private static let seed = "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA"

    @Test(arguments: [true, false])
    func aNodeWithTheServersNKeyRunsAndOneWithAnotherIsRefused(_ known: Bool) async throws {
        let herald = try #require(RunCommandTests.herald)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The other key: a valid user key the node does not have.
        let listed = known ? "UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME" : "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"
        let serverConfig = directory.appendingPathComponent("server.conf")
        try Data("authorization { users = [ { nkey: \(listed) } ] }\n".utf8).write(to: serverConfig)
        let server = try await NATSServerProcess.start(arguments: ["-c", serverConfig.path])
        defer { Task { await server.stop() } }
        let config = try ClusterStartTests.shippedConfig(in: directory, cluster: [
            "servers": ["nats://127.0.0.1:\(server.port)"], "node": "a", "connectWait": "0ms",
            "auth": ["nkeySeed": ["env": "HERALD_TEST_NKEY_SEED"]],
        ])
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_TEST_NKEY_SEED"] = Self.seed
        let child = try ChildProcess(herald, ["run", "--config", config.path], environment: environment)
        if known {
            let running = await child.waitForStandardError { $0.contains("herald: running") }
            #expect(running, "stderr: \(child.stderr)")
            child.signal(SIGTERM)
        }
        let result = try #require(await child.finish())
        #expect(result.status == (known ? 0 : 1), "stderr: \(result.stderr)")
        if !known { #expect(result.stderr.contains("Authorization Violation"), "stderr: \(result.stderr)") }
        #expect(!result.stderr.contains(Self.seed) && !result.stdout.contains(Self.seed))
    }

    /// Mutual TLS to a JetStream server that verifies clients: with the test CA and a client
    /// certificate the node runs; against a server whose certificate expired it stops with exit 1
    /// saying so.
    @Test(arguments: [true, false])
    func aNodeConnectsOverMutualTLSAndRefusesAnExpiredServerCertificate(_ valid: Bool) async throws {
        let herald = try #require(RunCommandTests.herald)
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let directory = certificates.directory
        let serverConfig = directory.appendingPathComponent("server.conf")
        let (certificate, key) = valid ? (certificates.serverCertificate, certificates.serverKey) : (certificates.expiredCertificate, certificates.expiredKey)
        try Data("tls { cert_file: \"\(certificate)\", key_file: \"\(key)\", ca_file: \"\(certificates.caFile)\", verify: true }\n".utf8).write(to: serverConfig)
        let server = try await NATSServerProcess.start(arguments: ["-c", serverConfig.path])
        defer { Task { await server.stop() } }
        let config = try ClusterStartTests.shippedConfig(in: directory, cluster: [
            "servers": ["tls://127.0.0.1:\(server.port)"], "node": "a", "connectWait": "0ms",
            "tls": ["caFile": certificates.caFile, "certificateFile": certificates.clientCertificate, "keyFile": certificates.clientKey],
        ])
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        if valid {
            let running = await child.waitForStandardError { $0.contains("herald: running") }
            #expect(running, "stderr: \(child.stderr)")
            child.signal(SIGTERM)
        }
        let result = try #require(await child.finish())
        #expect(result.status == (valid ? 0 : 1), "stderr: \(result.stderr)")
        if !valid { #expect(result.stderr.contains("certificate has expired"), "stderr: \(result.stderr)") }
    }
}
