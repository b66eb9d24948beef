import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald run` with the shipped config's `http` section: it prints the endpoint's URL, and the
/// endpoint answers over real HTTP while the daemon runs.
@Suite struct StatusEndpointRunTests {
    @Test(.timeLimit(.minutes(5)))
    func runPrintsTheStatusURLAndServesMetricsWhileRunning() async throws {
        let herald = try #require(RunCommandTests.herald)
        let config = try RunCommandTests().freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let child = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await child.waitForStandardError { $0.contains("herald: running 6 loaders") })
        let line = try #require(child.stderr.split(separator: "\n").first { $0.hasPrefix("herald: status at http://127.0.0.1:") })
        // `herald: status at http://127.0.0.1:PORT/ (metrics at …/metrics)`
        let url = try #require(line.split(separator: " ").dropFirst(3).first.map(String.init))
        #expect(url.hasSuffix("/"))
        #expect(line.hasSuffix("(metrics at \(url)metrics)"))

        let ready = try await Curl.run(["-i", url + "readyz"])
        #expect(ready.stdout.hasPrefix("HTTP/1.1 200 OK"), "\(ready.stdout)\(ready.stderr)")
        let metrics = try await Curl.run([url + "metrics"]).stdout
        for loader in RunCommandTests.loaders {
            #expect(metrics.contains("herald_loader_pulls_total{loader=\"\(loader)\"} "), "no pulls of \(loader)")
        }
        #expect(metrics.contains("herald_archive_written_bytes_total{sink=\"archive\"} "))
        #expect(metrics.contains("herald_post_intents_pending{scheduler=\"posts\"} "))

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        // The port is free again once the daemon stopped.
        #expect(try await Curl.run([url + "healthz"]).status != 0)
    }
}
