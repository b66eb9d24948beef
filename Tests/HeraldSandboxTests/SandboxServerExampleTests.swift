import Foundation
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

    @Test(.enabled(if: binary != nil), .timeLimit(.minutes(1)))
    func examplePrintsItsURLServesAndStopsOnSIGTERM() async throws {
        guard let binary = Self.binary else { return }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        let collected = OutputCollector()
        output.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData) }
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // Bounded waits for the child's I/O, never a fixed sleep.
        let prefix = "sandbox listening on "
        try await waitUntil { collected.text.contains(prefix) && collected.text.contains("\n") }
        let line = collected.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let url = try #require(line.flatMap { URL(string: String($0.dropFirst(prefix.count))) })
        let (body, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/health"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ok"}"#)

        kill(process.processIdentifier, SIGTERM)
        try await waitUntil { !process.isRunning }
        try await waitUntil { collected.text.contains("stopped") }
        output.fileHandleForReading.readabilityHandler = nil
        #expect(process.terminationStatus == 0)
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 30 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Collects a child's output from the pipe's handler thread.
final class OutputCollector: @unchecked Sendable {
    // @unchecked Sendable: `data` is only touched while holding `lock`.
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}
