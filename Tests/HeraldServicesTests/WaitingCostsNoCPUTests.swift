import Foundation
import HeraldSandbox
import Testing

@testable import HeraldServices
import HeraldTestSupport

/// Waiting for a slow service must cost (almost) no CPU: URLSession on Linux busy-loops on a
/// writable socket for the whole wait. The measurement runs in a child process, alone, so the
/// tests running alongside in this process do not count.
@Suite(.serialized) struct WaitingCostsNoCPUTests {
    static let probeEnvironment = "HERALD_CPU_PROBE"

    @Test(.timeLimit(.minutes(5))) func waitingForSlowAnswersCostsLittleCPU() async throws {
        let run = try await IsolatedTestRun.run(
            filter: "WaitingCostsNoCPUTests/cpuProbe", environment: [Self.probeEnvironment: "1"])
        #expect(run.status == 0, "the probe failed:\n\(run.output)")
        // The probe really ran (a filter that matched nothing would also exit 0).
        #expect(run.output.contains("cpu probe:"), "the probe did not run:\n\(run.output)")
    }

    /// A POST (with a body, like `herald post`) and a GET, both answered 2 s late, in parallel.
    /// The CPU the process spends meanwhile must be a small fraction of the wall time waited.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[Self.probeEnvironment] == "1"))
    func cpuProbe() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults() }) { harness in
            try harness.sandbox.script(path: "/1.1/statuses/update.json", [.delay(.seconds(2))])
            try harness.sandbox.script(path: "/search/random.json", [.delay(.seconds(2))])
            let twitter = harness.twitter()
            let tiqav = harness.tiqav()
            let status = String(repeating: "waiting costs nothing ", count: 6)
            let startCPU = ProcessCPU.used()
            let started = ContinuousClock.now
            async let posted = twitter.update(status: status)
            async let images = tiqav.random()
            let (tweet, found) = try await (posted, images)
            let waited = ContinuousClock.now - started
            let spent = ProcessCPU.used() - startCPU
            print("cpu probe: waited \(waited), spent \(spent) of CPU")
            #expect(tweet.text == status)
            #expect(!found.isEmpty)
            #expect(spent < waited * 0.1, "spent \(spent) of CPU while waiting \(waited)")
        }
    }
}
