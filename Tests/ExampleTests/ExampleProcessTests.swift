import Foundation
import HeraldTestSupport
import Testing

/// Runs the examples as real child processes, as a user would with `swift run <name>`.
@Suite struct ExampleProcessTests {
    /// Runs a built product to completion; returns its exit status and standard output.
    static func run(_ product: String, _ arguments: [String] = []) async throws -> (Int32, String) {
        let binary = try #require(BuiltProducts.url(of: product), "\(product) is not built")
        let finished = try #require(try await ChildProcess.run(binary, arguments), "\(product) did not end")
        return (finished.status, finished.stdout)
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
