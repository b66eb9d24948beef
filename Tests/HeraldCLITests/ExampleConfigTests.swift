import Foundation
import Testing
import HeraldTestSupport

/// The example configs under `Examples/configs` are what `herald check` accepts, given the
/// environment variables their README names, and without them each missing variable is named.
@Suite struct ExampleConfigTests {
    static let directory = BuiltProducts.packageRoot.appendingPathComponent("Examples/configs")
    static let variables = ["mastodon-hashtag-digest.json": ["MASTODON_TOKEN"], "feeds-to-slack.json": ["SLACK_WEBHOOK_URL"],
                            "x-mastodon-crosspost.json": ["MASTODON_TOKEN", "X_USER_TOKEN"]]

    @Test func everyExampleConfigIsListedWithItsVariables() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files == Self.variables.keys.sorted())
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        for (file, names) in Self.variables {
            #expect(readme.contains("`\(file)`"))
            for name in names { #expect(readme.contains("`\(name)`"), "\(file): \(name)") }
        }
    }

    @Test(.timeLimit(.minutes(5)), arguments: variables.keys.sorted())
    func heraldCheckAcceptsTheExampleWithItsEnvironment(file: String) async throws {
        let herald = try #require(RunCommandTests.herald)
        let config = Self.directory.appendingPathComponent(file).path
        var environment = ProcessInfo.processInfo.environment
        for name in Self.variables[file] ?? [] {
            // A URL that is a credential must still be a URL.
            environment[name] = name.hasSuffix("_URL") ? "https://hooks.example.com/value-of-\(name)" : "value-of-\(name)"
        }
        let accepted = try #require(try await ChildProcess(herald, ["check", "--config", config], environment: environment).finish(within: .seconds(300)))
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdout.contains("\(file): ok"))

        for name in Self.variables[file] ?? [] { environment[name] = nil }
        let refused = try #require(try await ChildProcess(herald, ["check", "--config", config], environment: environment).finish(within: .seconds(300)))
        #expect(refused.status == 2)
        for name in Self.variables[file] ?? [] {
            #expect(refused.stderr.contains("environment variable \(name) is not set"), "\(refused.stderr)")
        }
        #expect(!refused.stderr.contains("value-of-"))
    }
}
