import Foundation
import HeraldTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the `sandbox-server` example as a process: it prints its URL, serves, and exits 0 on
/// SIGTERM.
@Suite struct SandboxServerExampleTests {
    static var binary: URL? { BuiltProducts.url(of: "sandbox-server") }

    @Test(.timeLimit(.minutes(5)))
    func examplePrintsItsURLServesAndStopsOnSIGTERM() async throws {
        let binary = try #require(Self.binary, "sandbox-server is not built")
        let child = try ChildProcess(binary, ["--port", "0"])
        defer { if child.isRunning { child.terminate() } }

        // Waits on the child's output and exit as they happen, bounded by the time limit.
        let prefix = "sandbox listening on "
        #expect(await child.waitForStandardOutput { $0.contains(prefix) && $0.contains("\n") })
        let line = child.stdout.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let url = try #require(line.flatMap { URL(string: String($0.dropFirst(prefix.count))) })
        let (body, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/health"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ok"}"#)

        child.signal(SIGTERM)
        let finished = try #require(await child.finish())
        #expect(finished.stdout.contains("stopped"))
        #expect(finished.status == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func exampleRefusesOutOfRangeFlagsWithUsageInsteadOfTrapping() async throws {
        let binary = try #require(Self.binary, "sandbox-server is not built")
        for arguments in [["--port", "1e30"], ["--port", "70000"], ["--seed", "nan"], ["--latency-ms", "1e300"],
                          ["--error-rate", "inf"], ["--drop-rate", "2"], ["--port"], ["--bogus", "1"]] {
            let finished = try #require(try await ChildProcess.run(binary, arguments))
            // A signal would show as 128 + its number: 2 is an exit with the usage status.
            #expect(finished.status == 2, "for \(arguments)")
        }
    }
}
