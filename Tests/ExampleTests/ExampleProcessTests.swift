import Foundation
import Testing

/// Runs the examples as real child processes, as a user would with `swift run <name>`.
@Suite struct ExampleProcessTests {
    /// The directory holding the built products (next to the test bundle).
    static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Runs a built product to completion; returns its exit status and standard output.
    static func run(_ product: String, _ arguments: [String] = []) async throws -> (Int32, String) {
        var binary = productsDirectory.appendingPathComponent(product)
        if !FileManager.default.isExecutableFile(atPath: binary.path) {
            binary = productsDirectory.deletingLastPathComponent().appendingPathComponent(product)
        }
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "\(product) is not built at \(binary.path)")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        // Read the pipe while the child runs, on a thread of its own (never the cooperative
        // pool): a child that writes more than the pipe holds (64 KiB) would otherwise block
        // forever waiting for a reader that only starts after it exits.
        let reader = output.fileHandleForReading
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            do { try process.run() } catch {
                continuation.resume(throwing: error)
                return
            }
            try? output.fileHandleForWriting.close()
            Thread.detachNewThread {
                let data = reader.readDataToEndOfFile()
                continuation.resume(returning: data)
            }
        }
        // End of file on the pipe: the child closed its output, so it has exited or is exiting.
        let status: Int32 = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                process.waitUntilExit()
                continuation.resume(returning: process.terminationStatus)
            }
        }
        return (status, String(decoding: data, as: UTF8.self))
    }

    @Test func loaderNotificationsShowsSeed001sFlow() async throws {
        let (status, output) = try await Self.run("loader-notifications")
        #expect(status == 0)
        #expect(output == """
            timeline view: 2 statuses from timeline
              - Hello from Herald
              - テストの投稿です 🐦
            log: #1 loader.timeline.finished from loader.timeline
            log: #2 loader.images.finished from loader.images
            timeline view: timeline failed: The request timed out.
            log: #3 loader.timeline.failed from loader.timeline
            log: #4 loader.images.failed from loader.images
            delivered to the timeline view: 2 of 4 events

            """)
    }

    // `herald` is the daemon now (issue 4): it runs until a signal, so these use its commands
    // that end by themselves. Tests/HeraldCLITests covers run, signals and every message.
    @Test func heraldChecksTheShippedConfig() async throws {
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config.json")
        let (status, output) = try await Self.run("herald", ["check", "--config", config.path])
        #expect(status == 0)
        #expect(output == "\(config.path): ok (5 services, 6 loaders, 3 subscribers)\n")
    }

    @Test func heraldRefusesUnknownOptions() async throws {
        let (status, output) = try await Self.run("herald", ["--frobnicate"])
        #expect(status == 2)
        #expect(output.isEmpty)   // the one-line message goes to standard error
    }
}
