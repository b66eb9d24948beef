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
    static var binary: URL? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("sandbox-server")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    @Test(.timeLimit(.minutes(5)))
    func examplePrintsItsURLServesAndStopsOnSIGTERM() async throws {
        let binary = try #require(Self.binary, "sandbox-server is not built")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        let collected = OutputCollector()
        process.terminationHandler = { _ in collected.signal() }
        try process.run()
        readToEndOnDedicatedThread(output.fileHandleForReading) { chunk in collected.append(chunk) }
        defer { if process.isRunning { process.terminate() } }

        // Waits on the child's output and exit as they happen, bounded by the time limit.
        let prefix = "sandbox listening on "
        await collected.waitUntil { $0.contains(prefix) && $0.contains("\n") }
        let line = collected.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let url = try #require(line.flatMap { URL(string: String($0.dropFirst(prefix.count))) })
        let (body, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/health"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ok"}"#)

        kill(process.processIdentifier, SIGTERM)
        await collected.waitUntil { _ in !process.isRunning }
        await collected.waitUntil { $0.contains("stopped") }
        #expect(process.terminationStatus == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func exampleRefusesOutOfRangeFlagsWithUsageInsteadOfTrapping() async throws {
        let binary = try #require(Self.binary, "sandbox-server is not built")
        for arguments in [["--port", "1e30"], ["--port", "70000"], ["--seed", "nan"], ["--latency-ms", "1e300"],
                          ["--error-rate", "inf"], ["--drop-rate", "2"], ["--port"], ["--bogus", "1"]] {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let status: Int32 = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
            #expect(status == 2, "for \(arguments)")
            #expect(process.terminationReason == .exit, "for \(arguments)")
        }
    }
}

/// Collects a child's output from the pipe's handler thread and wakes waiters on every
/// change (new output or the child's exit).
final class OutputCollector: @unchecked Sendable {
    // @unchecked Sendable: `data` and `waiters` are only touched while holding `lock`.
    private let lock = NSLock()
    private var data = Data()
    private var waiters: [AsyncStream<Void>.Continuation] = []

    func append(_ chunk: Data) {
        lock.withLock { data.append(chunk) }
        signal()
    }

    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Wakes every waiter to check its condition again.
    func signal() {
        for waiter in lock.withLock({ waiters }) { waiter.yield() }
    }

    /// Returns once `condition` holds for the output so far, checking after each change.
    func waitUntil(_ condition: (String) -> Bool) async {
        let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        lock.withLock { waiters.append(continuation) }
        defer { continuation.finish() }
        if condition(text) { return }
        for await _ in changes where condition(text) { return }
    }
}
