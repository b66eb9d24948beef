import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A cluster node reloads its log and file subscribers; what is leased or queued across nodes
/// (loaders, services, post subscribers) and the cluster section wait for a restart, and the
/// reload says so. `herald run` against a real nats-server.
@Suite struct ClusterReloadTests {
    static func config(server: String, node: String, every: String, extra: String) -> String {
        """
        {
          "state": "var/state",
          "services": {"tiqav": {"url": "sandbox"}},
          "loaders": {"images": {"kind": "tiqav", "service": "tiqav", "every": "\(every)"}},
          "subscribers": {
            "console": {"kind": "log", "topics": [">"], "level": "info"}\(extra)
          },
          "http": {"listen": "127.0.0.1:0"},
          "cluster": {"servers": ["\(server)"], "node": "\(node)", "replicas": 1, "connectWait": "2m"}
        }
        """
    }

    @Test(.timeLimit(.minutes(5)), .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
    func aNodeReloadsItsSubscribersAndSaysWhatWaitsForARestart() async throws {
        let server = try await NATSServerProcess.start()
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.writeRaw(Self.config(server: server.url, node: "a", every: "1h", extra: ""))
        let (child, url) = try await rig.start()

        let archive = #", "archive": {"kind": "file", "topics": [">"], "path": "var/events.jsonl"}"#
        try rig.writeRaw(Self.config(server: server.url, node: "b", every: "2h", extra: archive))
        let reload = try await rig.reload(url)
        #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        #expect(reload.stdout.contains("subscribers.archive: added"), "\(reload.stdout)")
        #expect(reload.stdout.contains("note: cluster: changed, but applies only at the next start"), "\(reload.stdout)")
        #expect(reload.stdout.contains("note: loaders, services and post subscribers of a cluster node change only at the next start"),
                "\(reload.stdout)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        // The archive added by the reload took the reload's own event.
        #expect(rig.archive.contains("\"topic\":\"herald.config.reloaded\""), "\(rig.archive)")
        await server.stop()
    }
}
