import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import HeraldTestSupport

/// `herald replay`, `herald check --rule/--event` and `herald check --print`, as processes.
@Suite struct ReplayCommandTests {
    static let bus = "8e5c1f3a-0000-4000-8000-000000000001"

    /// A config with one post rule on new todos, to the embedded sandbox's twitter.
    static let config = """
        {
          "state": "var/state",
          "services": {
            "twitter": {"url": "sandbox", "auth": {"consumerKey": "sandbox", "consumerSecret": {"env": "HERALD_TEST_NO_SUCH_VARIABLE", "default": "sandbox-secret"}, "token": "sandbox", "tokenSecret": "sandbox-token-secret"}},
            "baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}
          },
          "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
          "subscribers": {
            "posts": {"kind": "post", "rules": {
              "todo-tweet": {"on": "loader.todos.finished", "for": "new", "service": "twitter", "text": "New todo: {{description}}"}
            }}
          }
        }
        """

    static func line(seq: Int, time: String, todos: [(String, String)]) -> String {
        let items = todos.map { #"{"_id":"\#($0.0)","description":"\#($0.1)"}"# }.joined(separator: ",")
        return #"{"seq":\#(seq),"time":"\#(time)","topic":"loader.todos.finished","sender":"loader.todos","id":"\#(bus):\#(seq)","correlation":"\#(bus):\#(seq)","event":{"loader":"todos","bucket":"todos","todos":[\#(items)],"newTodos":[\#(items)],"removedIDs":[]}}"#
    }

    /// The fixture's services and rule, and more rules: a webhook's body on each new todo, and
    /// (with `baas`, a BaaS service's URL) a BaaS object in `notes`.
    static func configWithMoreRules(baas: URL?) -> String {
        let note = baas.map { url in
            (#""store": {"kind": "baas", "url": "\#(url.absoluteString)", "tenant": "demo", "appId": "todo", "appKey": "sandbox"},"#,
             #""todo-note": {"on": "loader.todos.finished", "for": "new", "service": "store", "bucket": "notes", "fields": {"text": "{{description}}"}},"#)
        }
        return """
            {
              "state": "var/state",
              "services": {
                \(note?.0 ?? "")
                "twitter": {"url": "sandbox", "auth": {"consumerKey": "sandbox", "consumerSecret": "sandbox-secret", "token": "sandbox", "tokenSecret": "sandbox-token-secret"}},
                "hook": {"kind": "webhook", "url": "https://hooks.example.com/herald"},
                "baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}
              },
              "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
              "subscribers": {
                "posts": {"kind": "post", "rules": {
                  \(note?.1 ?? "")
                  "todo-tweet": {"on": "loader.todos.finished", "for": "new", "service": "twitter", "text": "New todo: {{description}}"},
                  "todo-hook": {"on": "loader.todos.finished", "for": "new", "service": "hook", "body": {"todo": "{{_id}}", "text": "New todo: {{description}}"}}
                }}
              }
            }
            """
    }

    /// The lines printed for the post of idempotency key `key`: its heading, then its indented lines.
    static func block(of key: String, in output: String) -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let at = lines.firstIndex(of: "  key: \(key)"), at > 0 else { return [] }
        return [lines[at - 1]] + lines[at...].prefix { $0.hasPrefix("  ") }
    }

    func fixture(config: String = Self.config) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("var"), withIntermediateDirectories: true)
        try config.write(to: directory.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        // A rotated file (older), then the live one with a corrupt line and a torn last line.
        let rotated = Self.line(seq: 1, time: "2026-12-01T08:00:00.000Z", todos: [("t1", "buy milk")]) + "\n"
        let live = Self.line(seq: 2, time: "2026-12-01T09:00:00.000Z", todos: [("t2", "call mum")]) + "\n"
            + "this is not json\n"
            + Self.line(seq: 3, time: "2026-12-01T10:00:00.000Z", todos: []) + "\n"
            + #"{"seq":4,"time":"2026-12-01T11:00"#
        try rotated.write(to: directory.appendingPathComponent("var/events.1.jsonl"), atomically: true, encoding: .utf8)
        try live.write(to: directory.appendingPathComponent("var/events.jsonl"), atomically: true, encoding: .utf8)
        return directory
    }

    func herald(_ arguments: [String], in directory: URL) async throws -> ChildProcess.Finished {
        let herald = try #require(BuiltProducts.url(of: "herald"))
        return try #require(try await ChildProcess.run(herald, arguments, in: directory))
    }

    @Test(.timeLimit(.minutes(5)))
    func aDryRunShowsEveryWouldBePostAndPostsNothing() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dry = try await herald(["replay", "var/events.jsonl"], in: directory)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains(#"post: text "New todo: buy milk""#), "\(dry.stdout)")
        #expect(dry.stdout.contains(#"post: text "New todo: call mum""#))
        #expect(dry.stdout.contains("key: todo-tweet:item:loader.todos:t1"))
        #expect(dry.stdout.contains("-> twitter  [outbox: new (would post)]"))
        #expect(dry.stdout.contains("3 events in the window; 2 posts: 2 new, 0 already in the outbox, 0 cannot be made; 2 lines skipped (corrupt or torn)"),
                "\(dry.stdout)")
        #expect(dry.stdout.contains("dry run: nothing posted"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("var/state/outbox/posts.jsonl").path))
    }

    @Test(.timeLimit(.minutes(5)))
    func aWindowSelectsEventsByTimeAndAnEmptyOneSaysSo() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let window = try await herald(["replay", "var/events.jsonl", "--since", "2026-12-01T08:30:00Z", "--until", "2026-12-01T09:30:00Z"], in: directory)
        #expect(window.status == 0)
        #expect(window.stdout.contains("call mum") && !window.stdout.contains("buy milk"), "\(window.stdout)")
        let empty = try await herald(["replay", "var/events.jsonl", "--since", "2027-01-01"], in: directory)
        #expect(empty.status == 0)
        #expect(empty.stdout.contains("no events in the window"), "\(empty.stdout)")
        let unknown = try await herald(["replay", "var/events.jsonl", "--rule", "nope"], in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--rule nope: no post rule of that name (rules: todo-tweet)"), "\(unknown.stderr)")
        let badTime = try await herald(["replay", "var/events.jsonl", "--since", "yesterday"], in: directory)
        #expect(badTime.status == 2)
        #expect(badTime.stderr.contains("--since: \"yesterday\" is not a time"), "\(badTime.stderr)")
    }

    @Test(.timeLimit(.minutes(5)))
    func postingSendsThroughTheOutboxExactlyOnce() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await herald(["replay", "var/events.jsonl", "--post"], in: directory)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.stdout.contains("posted 2 via posts"), "\(first.stdout)")
        let again = try await herald(["replay", "var/events.jsonl", "--post"], in: directory)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("2 posts: 0 new, 2 already in the outbox"), "\(again.stdout)")
        #expect(again.stdout.contains("[outbox: sent]"))
        #expect(again.stdout.contains("posted 0 via posts"), "\(again.stdout)")
    }

    @Test(.timeLimit(.minutes(5)))
    func checkRendersOneRuleAgainstOneEvent() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        try (Self.line(seq: 9, time: "2026-12-01T12:00:00.000Z", todos: [("t9", "water plants")]) + "\n")
            .write(to: directory.appendingPathComponent("event.json"), atomically: true, encoding: .utf8)
        let rendered = try await herald(["check", "--rule", "todo-tweet", "--event", "event.json"], in: directory)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(rendered.stdout.contains(#"post: text "New todo: water plants""#), "\(rendered.stdout)")
        let missing = try await herald(["check", "--rule", "todo-tweet"], in: directory)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("check takes --rule and --event together"))
    }

    @Test(.timeLimit(.minutes(5)))
    func checkPrintShowsDefaultsAndMasksSecrets() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let printed = try await herald(["check", "--print"], in: directory)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(!printed.stdout.contains("sandbox-secret"), "\(printed.stdout)")
        #expect(!printed.stdout.contains("sandbox-token-secret"))
        #expect(printed.stdout.contains("********"))
        // Defaults the file does not write: the outbox's retries, the loader's backoff.
        #expect(printed.stdout.contains("\"retry\""), "\(printed.stdout)")
        #expect(printed.stdout.contains("\"sha1\""))
        #expect((try? JSONSerialization.jsonObject(with: Data(printed.stdout.utf8))) != nil, "not JSON: \(printed.stdout)")
    }

    @Test(.timeLimit(.minutes(5)))
    func everyNewCommandHasHelp() async throws {
        let directory = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in ["reload", "replay", "check"] {
            let help = try await herald([command, "--help"], in: directory)
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("USAGE: herald \(command)"), "\(help.stdout)")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aWebhookRuleShowsItsRenderedBodyAndItsTarget() async throws {
        let directory = try fixture(config: Self.configWithMoreRules(baas: nil))
        defer { try? FileManager.default.removeItem(at: directory) }
        let dry = try await herald(["replay", "var/events.jsonl", "--rule", "todo-hook"], in: directory)
        #expect(dry.status == 0, "\(dry.stderr)")
        let first = Self.block(of: "todo-hook:item:loader.todos:t1", in: dry.stdout)
        #expect(first.first?.hasSuffix("loader.todos.finished  rule posts.todo-hook -> hook  [outbox: new (would post)]") == true, "\(dry.stdout)")
        #expect(first.contains(#"  post: body {"text":"New todo: buy milk","todo":"t1"}"#), "\(first)")
        let second = Self.block(of: "todo-hook:item:loader.todos:t2", in: dry.stdout)
        #expect(second.contains(#"  post: body {"text":"New todo: call mum","todo":"t2"}"#), "\(second)")
        #expect(dry.stdout.contains("2 posts: 2 new, 0 already in the outbox, 0 cannot be made"), "\(dry.stdout)")
        // The webhook's URL (a secret, for Slack's) is not printed, and the service is not asked.
        #expect(!dry.stdout.contains("hooks.example.com"))
        #expect(!dry.stdout.contains("service:"), "not asked without --ask-service: \(dry.stdout)")
    }

    @Test(.timeLimit(.minutes(5)))
    func askServiceSaysWhatABaaSHasAndWhichServicesCannotBeAsked() async throws {
        let herald = try #require(BuiltProducts.url(of: "herald"))
        let scratch = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let sandbox = try await PostFullDiskTests.BaaSSandbox.start(in: scratch, herald: herald)
        defer { sandbox.process.signal(SIGTERM) }
        // The BaaS has the note of t1 (as the daemon made it, with the key), not that of t2.
        var request = URLRequest(url: sandbox.url.appendingPathComponent("1/demo/objects/notes"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("todo", forHTTPHeaderField: "X-Application-Id")
        request.setValue("sandbox", forHTTPHeaderField: "X-Application-Key")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["text": "buy milk", "heraldKey": "todo-note:item:loader.todos:t1"])
        let (created, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 201, "\(String(decoding: created, as: UTF8.self))")
        let id = try #require((try JSONSerialization.jsonObject(with: created) as? [String: Any])?["_id"] as? String)

        let directory = try fixture(config: Self.configWithMoreRules(baas: sandbox.url))
        defer { try? FileManager.default.removeItem(at: directory) }
        let asked = try await self.herald(["replay", "var/events.jsonl", "--ask-service"], in: directory)
        #expect(asked.status == 0, "\(asked.stderr)")
        let present = Self.block(of: "todo-note:item:loader.todos:t1", in: asked.stdout)
        #expect(present.contains("  service: has it (\(id))"), "\(asked.stdout)")
        let absent = Self.block(of: "todo-note:item:loader.todos:t2", in: asked.stdout)
        #expect(absent.contains("  service: does not have it"), "\(absent)")
        for key in ["todo-tweet:item:loader.todos:t1", "todo-hook:item:loader.todos:t2"] {
            #expect(Self.block(of: key, in: asked.stdout).contains("  service: cannot be asked (see below)"), "\(asked.stdout)")
        }
        #expect(asked.stdout.contains("services asked: 1 already there, 1 not there, 4 cannot be asked"), "\(asked.stdout)")
        #expect(asked.stdout.contains("  service twitter (twitter) cannot be asked: a twitter (v1.1) service has no lookup by key or text"))
        #expect(asked.stdout.contains("  service hook (webhook) cannot be asked: a webhook receiver has no read API"))
        // Asking posted nothing: the bucket holds the one note, and no outbox was made.
        let (listed, _) = try await URLSession.shared.data(from: sandbox.url.appendingPathComponent("_sandbox/objects/notes"))
        #expect((try JSONSerialization.jsonObject(with: listed) as? [String: Any])?["count"] as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("var/state/outbox/posts.jsonl").path))

        // Without the flag the service is not asked.
        let plain = try await self.herald(["replay", "var/events.jsonl"], in: directory)
        #expect(plain.status == 0)
        #expect(!plain.stdout.contains("service:"), "\(plain.stdout)")
    }
}
