import Foundation
import HeraldCluster
import HeraldRuntime
import Testing

/// `cluster.auth`: each way NATS servers know their clients, its secrets from the environment,
/// and every mistake named by its path without showing a secret.
@Suite struct ClusterAuthConfigTests {
    private static let seed = "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVCJA"

    private func cluster(_ auth: Any, environment: [String: String] = [:], base: URL = URL(fileURLWithPath: "/tmp/herald")) throws -> ClusterSettings? {
        let object = ConfigFixtures.demo(setting: "cluster", to: ["servers": ["nats://127.0.0.1:4222"], "node": "a", "auth": auth])
        let data = try JSONSerialization.data(withJSONObject: object)
        return try ConfigLoader(environment: environment).parse(data, baseDirectory: base).cluster
    }

    private func issues(_ auth: Any) -> [String] {
        ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: ["servers": ["nats://127.0.0.1:4222"], "node": "a", "auth": auth]))
    }

    @Test func eachWayIsRead() throws {
        #expect(try cluster(["token": ["env": "NATS_TOKEN"]], environment: ["NATS_TOKEN": "t0k"])?.authentication?.description == "token")
        #expect(try cluster(["user": "herald", "password": "pw"])?.authentication?.description == "user herald with a password")
        #expect(try cluster(["nkeySeed": Self.seed])?.authentication?.description == "NKey UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let creds = "-----BEGIN NATS USER JWT-----\neyJ0.eyJ1.c2ln\n------END NATS USER JWT------\n\n"
            + "-----BEGIN USER NKEY SEED-----\n\(Self.seed)\n------END USER NKEY SEED------\n"
        try Data(creds.utf8).write(to: directory.appendingPathComponent("user.creds"))
        let read = try cluster(["credentials": "user.creds"], base: directory)?.authentication
        #expect(read?.description == "credentials of UDSAGCMYZ7K22FZDYFU7SVVKBOPLQYM3LGJL2YJMFL2CR26HT6G7AGME")
    }

    @Test func mistakesAreNamedByTheirPathAndNoSecretIsShown() {
        #expect(issues([:]).contains { $0.hasPrefix("cluster.auth: expected one of") })
        #expect(issues(["token": "a", "nkeySeed": Self.seed]).contains { $0.hasPrefix("cluster.auth: give one way to authenticate") })
        #expect(issues(["user": "herald"]).contains("cluster.auth.password: required"))
        #expect(issues(["tokn": "x"]).contains("cluster.auth.tokn: unknown key (did you mean \"token\"?)"))
        let badSeed = issues(["nkeySeed": "SUAACCAPCYOSIKZSHFAEOTSVLRRWU4LYP6DI3FE3UKU3BN56YXGNHWVDJA"])
        #expect(badSeed.contains { $0.hasPrefix("cluster.auth.nkeySeed: the NKey seed is not valid") }, "\(badSeed)")
        #expect(!badSeed.joined().contains("SUAACC"))
        #expect(issues(["credentials": "/nonexistent/user.creds"]).contains { $0.hasPrefix("cluster.auth.credentials: the credentials file /nonexistent/user.creds cannot be read") })
        #expect(issues(["token": ["env": "UNSET_TOKEN_VARIABLE"]]).contains("cluster.auth.token: environment variable UNSET_TOKEN_VARIABLE is not set and there is no default"))
    }

    @Test func tlsIsReadWithItsFilesAndMistakesAreNamed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["ca.pem", "client.pem", "client.key"] { try Data("x".utf8).write(to: directory.appendingPathComponent(name)) }
        let object = ConfigFixtures.demo(setting: "cluster", to: [
            "servers": ["tls://127.0.0.1:4222"], "node": "a",
            "tls": ["caFile": "ca.pem", "certificateFile": "client.pem", "keyFile": "client.key"],
        ])
        let configuration = try ConfigLoader(environment: [:]).parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: directory)
        let tls = try #require(configuration.cluster?.tls)
        #expect(tls.caFile == directory.appendingPathComponent("ca.pem").path)
        #expect(tls.certificateFile == directory.appendingPathComponent("client.pem").path)
        #expect(tls.privateKeyFile == directory.appendingPathComponent("client.key").path)
        #expect(configuration.cluster?.servers.map(\.absoluteString) == ["tls://127.0.0.1:4222"])

        func issues(_ tls: Any) -> [String] {
            ConfigFixtures.issues(ConfigFixtures.demo(setting: "cluster", to: ["servers": ["nats://127.0.0.1:4222"], "node": "a", "tls": tls]))
        }
        #expect(issues(["caFile": "/nonexistent/ca.pem"]).contains("cluster.tls.caFile: no file at /nonexistent/ca.pem"))
        #expect(issues(["certificateFile": "/etc/hostname"]).contains { $0.hasPrefix("cluster.tls.keyFile: required with certificateFile") })
        #expect(issues(["insecure": true]).contains("cluster.tls.insecure: unknown key"))
    }
}
