import Foundation

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
/// running alongside in this one. The child's output goes to files, read after it exits, so a
/// full pipe can never stall it.
enum IsolatedTestRun {
    struct Finished: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs the tests whose names match `filter` with `environment` added.
    static func run(filter: String, environment: [String: String]) async throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-isolated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appendingPathComponent("output")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try output.close()
        return Finished(status: status, output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
    }
}
