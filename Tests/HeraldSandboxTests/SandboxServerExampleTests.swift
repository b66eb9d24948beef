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
        let (chunks, chunkContinuation) = AsyncStream<Data>.makeStream()
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { chunkContinuation.finish() } else { chunkContinuation.yield(data) }
        }
        let (exits, exitContinuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exitContinuation.yield($0.terminationStatus); exitContinuation.finish() }
        try process.run()

        var text = ""
        var baseURL: URL?
        for await chunk in chunks {
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("sandbox listening on ") }) {
                baseURL = URL(string: String(line.dropFirst("sandbox listening on ".count)))
                break
            }
        }
        let url = try #require(baseURL)
        let (body, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/health"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ok"}"#)

        kill(process.processIdentifier, SIGTERM)
        var status: Int32 = -1
        for await code in exits { status = code }
        for await chunk in chunks { text += String(decoding: chunk, as: UTF8.self) }
        #expect(status == 0)
        #expect(text.contains("stopped"))
    }
}
