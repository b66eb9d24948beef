import Foundation
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time (user + system) the whole process has used so far, from `getrusage`.
enum ProcessCPU {
    static func used() -> Duration {
        var usage = rusage()
        #if canImport(Glibc)
        _ = getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        _ = getrusage(RUSAGE_SELF, &usage)
        #endif
        func duration(_ time: timeval) -> Duration {
            .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }
}

/// Runs one test of this bundle alone in a child process (the test runner itself, filtered
/// to that test), so a measurement of the whole process's CPU is not shared with the tests
/// running alongside in this one. ``ChildProcess`` reads its output as it comes, so a full pipe
/// never stalls it.
enum IsolatedTestRun {
    struct Finished: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs the tests whose names match `filter` with `environment` added.
    static func run(filter: String, environment: [String: String]) async throws -> Finished {
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let child = try await ChildProcess.run(runner, ["--testing-library", "swift-testing", "--filter", filter],
                                               environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                               within: .seconds(600))
        guard let child else { return Finished(status: -1, output: "the isolated run of \(filter) did not end") }
        return Finished(status: child.status, output: child.stdout + child.stderr)
    }
}
