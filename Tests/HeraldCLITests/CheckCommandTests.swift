import Foundation
import Testing
import HeraldTestSupport

@Suite struct CheckCommandTests {
    static let herald = BuiltProducts.url(of: "herald")

    func temporaryConfig(_ text: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("config.json")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test
    func theShippedConfigIsValid() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, ["check"], in: BuiltProducts.packageRoot))
        #expect(result.status == 0)
        #expect(result.stdout == "config.json: ok (5 services, 6 loaders, 3 subscribers)\n")
        #expect(result.stderr.isEmpty)
    }

    @Test
    func aWebhookSecretThatIsNotBase64IsNamedWithItsPath() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {
              "services": {"hook": {"kind": "webhook", "url": "https://hooks.example.com/x", "secret": "whsec_not*base64"}},
              "loaders": {"news": {"kind": "feed", "url": "https://example.com/feed.xml", "every": "15m"}},
              "subscribers": {"posts": {"kind": "post", "rules": {
                "notify": {"on": "loader.news.finished", "for": "new", "service": "hook", "body": {"text": "{{item.title}}"}}}}}
            }
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("services.hook.secret: the secret is not valid base64 after \"whsec_\""), "\(result.stderr)")
        #expect(!result.stderr.contains("not*base64"))
    }

    @Test
    func everyErrorIsPrintedAndTheExitCodeIs2() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {
              "services": {"tiqav": {"url": "sandbox"}},
              "loaders": {
                "home": {"kind": "timeline", "service": "twitter", "every": "30x"},
                "images": {"kind": "tiqav", "service": "tiqav", "evry": "5m"}
              }
            }
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == """
            herald: \(file.path) is invalid (4 errors):
              loaders.home.service: no service named "twitter" (services: "tiqav")
              loaders.home.every: "30x" is not a duration
              loaders.images.evry: unknown key (did you mean "every"?)
              loaders.images.every: required

            """)
    }

    @Test
    func aMissingFileIsOneClearLine() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", "/nonexistent/herald.json"]))
        #expect(result.status == 2)
        #expect(result.stderr == "herald: /nonexistent/herald.json: no such file\n")
    }

    @Test
    func invalidJSONIsOneClearLine() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("{\"loaders\": ")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("herald: \(file.path): not valid JSON"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// A key written twice: JSONSerialization keeps the first, other JSON tools the last.
    @Test
    func aDuplicateKeyIsAnErrorWithItsPathAndExitCode2() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {
              "services": {"tiqav": {"url": "sandbox"}},
              "loaders": {"images": {"kind": "tiqav", "service": "tiqav", "every": "5m"}},
              "subscribers": {"console": {"kind": "log", "format": "text", "format": "json"}}
            }
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == """
            herald: \(file.path) is invalid (1 error):
              subscribers.console.format: duplicate key at line 4, column 64 (first at line 4, column 46); write it once

            """)
    }

    @Test
    func aTrailingCommaIsAnErrorWithItsPlaceAndExitCode2() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {
              "services": {"tiqav": {"url": "sandbox"}},
              "loaders": {"images": {"kind": "tiqav", "service": "tiqav", "every": "5m",}}
            }
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stderr == """
            herald: \(file.path) is invalid (1 error):
              loaders.images: trailing comma at line 3, column 76; JSON allows none

            """)
    }

    /// A secret of the wrong type is described by its type; a schedule too fast, a path with a
    /// NUL and a text too long for any status are configuration errors, not failures of `run`.
    @Test
    func secretsAreNotEchoedAndRunsThatCouldNeverWorkAreRefused() async throws {
        let herald = try #require(Self.herald)
        let text = String(repeating: "x", count: 281)
        let file = try temporaryConfig("""
            {
              "services": {
                "twitter": {"url": "sandbox", "auth": {"consumerKey": "k", "consumerSecret": "s", "token": "t", "tokenSecret": "ts"}},
                "leaky": {"kind": "twitter", "url": "sandbox",
                          "auth": {"consumerKey": "k", "consumerSecret": "s", "token": "t", "tokenSecret": 987654321}}
              },
              "loaders": {"home": {"kind": "timeline", "service": "twitter", "every": "1ms"}},
              "subscribers": {
                "archive": {"kind": "file", "path": "var/events\\u0000.jsonl"},
                "posts": {"kind": "post", "rules": {"hello": {"on": "loader.home.finished", "service": "twitter", "text": "\(text)"}}}
              }
            }
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(!result.stderr.contains("987654321"))
        #expect(result.stderr == """
            herald: \(file.path) is invalid (4 errors):
              services.leaky.auth.tokenSecret: expected a string or {"env": "NAME", "default": "…"}, got a number
              loaders.home.every: 1ms is below the minimum of 100ms for a service on the sandbox (1s for a real one)
              subscribers.archive.path: contains a NUL character, which no file name can hold
              subscribers.posts.rules.hello.text: without its placeholders the text is already 281 characters; a status holds at most 280

            """)
    }

    @Test(arguments: [
        (["run", "--bogus"], "herald: unknown option '--bogus' for 'run' (see 'herald run --help')\n"),
        (["check", "--for", "3s"], "herald: unknown option '--for' for 'check' (see 'herald check --help')\n"),
        (["launch"], "herald: unknown command 'launch' (commands: run, check, sandbox, tail, post, status, reload, replay; see 'herald --help')\n"),
        (["run", "--for"], "herald: --for needs a value\n"),
        (["run", "--for", "3x"], "herald: --for: \"3x\" is not a duration (250ms, 30s, 5m, 1h)\n"),
        (["sandbox", "--port", "http"], "herald: --port: \"http\" is not a port (0-65535)\n"),
        (["check", "extra"], "herald: unexpected argument 'extra' for 'check' (see 'herald check --help')\n"),
    ])
    func usageErrorsAreOneLineWithExitCode2(arguments: [String], message: String) async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, arguments))
        #expect(result.status == 2)
        #expect(result.stderr == message)
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [
        (["--help"], "USAGE: herald [COMMAND] [OPTIONS]"), (["help"], "USAGE: herald [COMMAND] [OPTIONS]"),
        (["run", "--help"], "USAGE: herald run"), (["check", "-h"], "USAGE: herald check"),
        (["sandbox", "--help"], "USAGE: herald sandbox"), (["help", "check"], "USAGE: herald check"),
    ])
    func everyCommandHasHelp(arguments: [String], prefix: String) async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, arguments))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(prefix))
    }

    @Test
    func anInsecureServiceIsValidButWarnedAbout() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {"services": {"tiqav": {"url": "https://api.example.com", "insecure": true}}, "loaders": {}}
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 0)
        #expect(result.stdout == "\(file.path): ok (1 service, 0 loaders, 0 subscribers)\n")
        #expect(result.stderr.hasPrefix("herald: warning: services.tiqav.insecure: certificate and host-name verification are off"))
    }

    @Test
    func anInsecureWebhookAndAnInsecureFeedAreValidButWarnedAbout() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {"services": {"hook": {"kind": "webhook", "url": "https://hooks.example/h", "insecure": true}},
             "loaders": {"blog": {"kind": "feed", "url": "https://feeds.example/atom.xml", "every": "15m", "insecure": true}}}
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n")
        #expect(warnings.count == 2, "\(result.stderr)")
        #expect(warnings.first?.hasPrefix("herald: warning: services.hook.insecure: certificate and host-name verification are off") == true)
        #expect(warnings.last?.hasPrefix("herald: warning: loaders.blog.insecure: certificate and host-name verification are off") == true)
    }

    @Test
    func aCAFileThatDoesNotExistIsAnError() async throws {
        let herald = try #require(Self.herald)
        let file = try temporaryConfig("""
            {"services": {"tiqav": {"url": "https://api.example.com", "caFile": "private-ca.pem"}}, "loaders": {}}
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["check", "--config", file.path]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("services.tiqav.caFile: no file at \(file.deletingLastPathComponent().appendingPathComponent("private-ca.pem").path)"))
    }
}
