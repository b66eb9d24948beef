import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import Testing

@Suite struct ConfigValidationTests {
    @Test func theDemoIsValid() throws {
        let data = try JSONSerialization.data(withJSONObject: ConfigFixtures.demo)
        let configuration = try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(configuration.loaders.keys.sorted() == ["home", "images", "itmedia", "todos"])
        #expect(configuration.stateDirectory.path == "/tmp/herald/var/state")
        #expect(configuration.usesSandbox)
        #expect(configuration.loaders["home"]?.schedule.interval == .seconds(30))
        #expect(configuration.loaders["itmedia"]?.kind == .timeline(.init(timeline: .user(screenName: "itmedia"), format: .xml)))
        #expect(configuration.subscribers["console"]?.topics == ["loader.>", "post.>", "bus.>"])
        #expect(configuration.secrets.contains("sandbox-secret"))
    }

    @Test func theShippedConfigIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try ConfigLoader(environment: [:]).load(contentsOf: root.appendingPathComponent("config.json"))
        #expect(configuration.loaders.count == 6)
        #expect(configuration.loaders["news"]?.kind == .feed(FeedSettings(location: .sandbox(path: "/feeds/news.rss"))))
    }

    /// The shipped demo grows its todo bucket, so a watching daemon sees new todos.
    @Test func theShippedConfigGrowsTheTodoLoadersBucket() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try ConfigLoader(environment: [:]).load(contentsOf: root.appendingPathComponent("config.json"))
        #expect(configuration.sandbox.todoInterval == .seconds(15))
        let sandbox = configuration.sandboxConfiguration()
        #expect(sandbox.todoInterval == 15)
        #expect(sandbox.todoBucket == "todos")
        #expect(sandbox.baasTenant == "demo")
    }

    @Test func todoIntervalMapsToTheFirstSandboxTodoLoadersBucket() throws {
        var object = ConfigFixtures.demo(setting: "sandbox.todoInterval", to: "250ms")
        object = ConfigFixtures.set(object, "loaders.chores", ["kind": "todo", "service": "baas", "bucket": "chores", "every": "1m"])
        object = ConfigFixtures.set(object, "loaders.todos.bucket", "tasks")
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(configuration.sandbox.todoInterval == .milliseconds(250))
        let sandbox = configuration.sandboxConfiguration()
        #expect(sandbox.todoInterval == 0.25)
        #expect(sandbox.todoBucket == "chores")  // "chores" sorts before "todos"

        let off = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: ConfigFixtures.demo), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        #expect(off.sandbox.todoInterval == nil)
        #expect(off.sandboxConfiguration().todoInterval == nil)
    }

    @Test func secretsComeFromTheEnvironmentFirst() throws {
        let data = try JSONSerialization.data(withJSONObject: ConfigFixtures.demo)
        let configuration = try ConfigLoader(environment: ["TW_CONSUMER_SECRET": "from-env"])
            .parse(data, baseDirectory: URL(fileURLWithPath: "/"))
        guard case .twitter(_, let credentials, _)? = configuration.services["twitter"] else {
            Issue.record("no twitter service")
            return
        }
        #expect(credentials.consumerSecret == "from-env")
        #expect(configuration.sandboxConfiguration().credentials.consumerSecret == "from-env")
        #expect(configuration.sandboxConfiguration().baasTenant == "demo")
    }

    /// (path, the JSON put there or nil to remove the key, the exact message expected)
    @Test(arguments: [
        ("loaders.home.every", #""30x""#, #"loaders.home.every: "30x" is not a duration"#),
        ("loaders.home.every", nil, "loaders.home.every: required"),
        ("loaders.home.every", #""0s""#, "loaders.home.every: must be longer than 0"),
        ("loaders.home.every", #"30"#, #"loaders.home.every: expected a duration such as "30s", got 30"#),
        ("loaders.home.evry", #""30s""#, #"loaders.home.evry: unknown key (did you mean "every"?)"#),
        ("loaders.home.service", #""twiter""#, #"loaders.home.service: no service named "twiter" (services: "baas", "tiqav", "twitter")"#),
        ("loaders.home.service", #""tiqav""#, #"loaders.home.service: "tiqav" is a tiqav service; a timeline loader needs a twitter service"#),
        ("loaders.home.kind", #""rss""#, #"loaders.home.kind: "rss" is not one of timeline, tiqav, todo, mastodon, feed"#),
        ("loaders.home.count", #"500"#, "loaders.home.count: 500 is not in 1...200"),
        ("loaders.home.count", #""20""#, #"loaders.home.count: expected an integer, got "20""#),
        ("loaders.home.format", #""yaml""#, #"loaders.home.format: "yaml" is not one of json, xml"#),
        ("loaders.home.timeline", #""list""#, #"loaders.home.timeline: "list" is not one of home, user"#),
        ("loaders.home.screenName", #""someone""#, #"loaders.home.screenName: only for "timeline": "user""#),
        ("loaders.itmedia.screenName", nil, "loaders.itmedia.screenName: required"),
        ("loaders.todos.bucket", nil, "loaders.todos.bucket: required"),
        ("loaders.todos.bucket", #""""#, "loaders.todos.bucket: must not be empty"),
        ("loaders.images.jitter", #""soon""#, #"loaders.images.jitter: "soon" is not a duration"#),
        ("loaders.images.backoff", #"{"initial": "10s", "max": "1s"}"#, "loaders.images.backoff.max: must not be shorter than backoff.initial"),
        ("loaders.images.backoff", #"{"initail": "10s"}"#, #"loaders.images.backoff.initail: unknown key (did you mean "initial"?)"#),
        ("loaders.home", #""30s""#, #"loaders.home: expected an object, got "30s""#),
        ("services.tiqav.url", #""ftp://example.com""#, #"services.tiqav.url: "ftp://example.com" is not "sandbox" or an http(s) URL"#),
        ("services.tiqav.url", nil, "services.tiqav.url: required"),
        ("services.tiqav.timeout", #""never""#, #"services.tiqav.timeout: "never" is not a duration"#),
        ("services.baas.tenant", nil, "services.baas.tenant: required"),
        ("services.baas.appKey", #"{"env": "NO_SUCH_VARIABLE"}"#, "services.baas.appKey: environment variable NO_SUCH_VARIABLE is not set and there is no default"),
        ("services.baas.appKey", #"{"env": "X", "fallback": "y"}"#, "services.baas.appKey.fallback: unknown key"),
        ("services.twitter.auth", nil, "services.twitter.auth: required"),
        ("services.twitter.auth.token", nil, "services.twitter.auth.token: required"),
        ("services.twitter.auth.token", #"5"#, #"services.twitter.auth.token: expected a string or {"env": "NAME", "default": "…"}, got a number"#),
        ("services.rss", #"{"url": "sandbox"}"#, "services.rss.kind: required (twitter, tiqav, baas, mastodon or webhook) when the service is not named after its kind"),
        ("services.twitter.kind", #""misskey""#, #"services.twitter.kind: "misskey" is not one of twitter, tiqav, baas, mastodon, webhook"#),
        ("subscribers.console.kind", #""sms""#, #"subscribers.console.kind: "sms" is not one of log, file, post"#),
        ("subscribers.console.level", #""loud""#, #"subscribers.console.level: "loud" is not one of debug, info, warning, error"#),
        ("subscribers.console.format", #""xml""#, #"subscribers.console.format: "xml" is not one of text, logfmt, json"#),
        ("subscribers.console.topics", #"["loader.>.x"]"#, #"subscribers.console.topics[0]: "loader.>.x" is not a topic pattern"#),
        ("subscribers.console.topics", #"[]"#, "subscribers.console.topics: expected a non-empty array of topic patterns, got an array"),
        ("subscribers.console.topic", #"["loader.>"]"#, #"subscribers.console.topic: unknown key (did you mean "topics"?)"#),
        ("sandbox.port", #"70000"#, "sandbox.port: 70000 is not in 0...65535"),
        ("sandbox.faults.errorRate", #"1.5"#, "sandbox.faults.errorRate: 1.5 is not in 0...1"),
        ("sandbox.faults.latency", #""slow""#, #"sandbox.faults.latency: "slow" is not a duration"#),
        ("sandbox.faults.chaos", #"true"#, "sandbox.faults.chaos: unknown key"),
        ("sandbox.todoInterval", #""0s""#, "sandbox.todoInterval: must be longer than 0"),
        ("sandbox.todoInterval", #"15"#, #"sandbox.todoInterval: expected a duration such as "30s", got 15"#),
        ("sandbox.todoInterval", #""often""#, #"sandbox.todoInterval: "often" is not a duration"#),
        ("sandbox.todoIntervall", #""15s""#, #"sandbox.todoIntervall: unknown key (did you mean "todoInterval"?)"#),
        ("state", #"3"#, "state: expected a string, got 3"),
        ("servces", #"{}"#, #"servces: unknown key (did you mean "services"?)"#),
        ("services", nil, "services: required"),
        ("loaders", nil, "loaders: required"),
    ] as [(String, String?, String)])
    func eachProblemNamesItsPath(path: String, json: String?, expected: String) throws {
        let value = try json.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: path, to: value))
        #expect(issues.contains(expected), "got \(issues)")
    }

    @Test func everyProblemIsReportedAtOnceInDocumentOrder() {
        var broken = ConfigFixtures.demo(setting: "loaders.home.every", to: "30x")
        broken = ConfigFixtures.set(broken, "loaders.todos.service", "bass")
        broken = ConfigFixtures.set(broken, "subscribers.console.level", "loud")
        broken = ConfigFixtures.set(broken, "sandbox.port", -1)
        #expect(ConfigFixtures.issues(broken) == [
            #"loaders.home.every: "30x" is not a duration"#,
            #"loaders.todos.service: no service named "bass" (services: "baas", "tiqav", "twitter")"#,
            #"subscribers.console.level: "loud" is not one of debug, info, warning, error"#,
            "sandbox.port: -1 is not in 0...65535",
        ])
    }

    @Test func aReferenceToAnInvalidServiceIsNotReportedTwice() {
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: "services.tiqav.url", to: "nowhere"))
        #expect(issues == [#"services.tiqav.url: "nowhere" is not "sandbox" or an http(s) URL"#])
    }

    @Test func invalidLoaderIDsAreErrors() {
        var broken = ConfigFixtures.demo
        var loaders = broken["loaders"] as? [String: Any] ?? [:]
        loaders["my loader"] = ["kind": "tiqav", "service": "tiqav", "every": "1m"]
        broken["loaders"] = loaders
        #expect(ConfigFixtures.issues(broken) == [#"loaders.my loader: "my loader" is not a valid loader id (letters, digits, - and _ only)"#])
    }

    @Test func syntaxErrorsAndWrongRootsAreOneLine() {
        #expect(ConfigFixtures.issues(Data("{\"state\": ".utf8)).first?.hasPrefix("not valid JSON") == true)
        #expect(ConfigFixtures.issues(Data("[]".utf8)) == ["expected an object, got an array"])
    }

    @Test func aFileSubscriberArchivesWithItsSettings() throws {
        var object = ConfigFixtures.demo
        var subscribers = object["subscribers"] as? [String: Any] ?? [:]
        subscribers["archive"] = ["kind": "file", "path": "var/events.jsonl", "durability": "always",
                                  "syncEvery": "250ms", "rotate": ["maxBytes": 1_000_000, "keep": 3]] as [String: Any]
        object["subscribers"] = subscribers
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        let archive = try #require(configuration.subscribers["archive"]?.archive)
        #expect(archive == ArchiveSettings(name: "archive", path: "var/events.jsonl", durability: .always, syncEvery: .milliseconds(250),
                                           rotation: FileSinkRotation(maxBytes: 1_000_000, keep: 3)))
        #expect(configuration.subscribers["archive"]?.topics == [">"])
    }

    /// Each kind carries only its own settings: a log subscriber its level, format and output,
    /// a file subscriber its archive, a post subscriber its rules.
    @Test func eachSubscriberKindIsItsOwnCase() throws {
        var object = ConfigFixtures.withPosts
        var subscribers = object["subscribers"] as? [String: Any] ?? [:]
        subscribers["archive"] = ["kind": "file", "path": "var/events.jsonl"]
        object["subscribers"] = subscribers
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
        let kinds = configuration.subscribers.keys.sorted().map { "\($0): \(configuration.subscribers[$0]?.kind ?? "-")" }
        #expect(kinds == ["archive: file", "console: log", "posts: post"])
        #expect(configuration.subscribers["console"]?.logSettings
            == LogSettings(name: "console", topics: ["loader.>", "post.>", "bus.>"], level: .info, format: .text, output: .standardError))
        #expect(configuration.subscribers["archive"]?.archive == ArchiveSettings(name: "archive", path: "var/events.jsonl"))
        let posting = try #require(configuration.subscribers["posts"]?.posting)
        #expect(posting.name == "posts")
        #expect(configuration.subscribers["posts"]?.topics == posting.rules.map(\.pattern.description))
    }

    @Test func aFileSubscriberIsValidatedLikeTheRest() {
        var object = ConfigFixtures.demo
        var subscribers = object["subscribers"] as? [String: Any] ?? [:]
        subscribers["archive"] = ["kind": "file", "durability": "sometimes", "rotate": ["keep": -1], "level": "info"] as [String: Any]
        object["subscribers"] = subscribers
        #expect(ConfigFixtures.issues(object) == [
            "subscribers.archive.level: unknown key",
            "subscribers.archive.path: required",
            #"subscribers.archive.durability: "sometimes" is not one of none, batch, always"#,
            "subscribers.archive.rotate.keep: -1 is not in 0...1000",
            "subscribers.archive.rotate.maxBytes: required",
        ])
    }

    @Test func aLogFileThatIsADirectoryIsAConfigError() {
        let object = ConfigFixtures.set(ConfigFixtures.demo, "subscribers.console.output", "/tmp")
        #expect(ConfigFixtures.issues(object) == [#"subscribers.console.output: "/tmp" is a directory"#])
    }

    @Test func aSyntaxErrorSaysWhere() {
        let issue = ConfigFixtures.issues(Data("{\n  \"state\": \"x\",\n  \"services\": oops\n}\n".utf8)).first ?? ""
        #expect(issue.hasPrefix("not valid JSON"))
        #expect(issue.contains("line 3, column 15"), "got: \(issue)")
    }

    @Test func aMissingFileIsOneProblem() {
        #expect(throws: ConfigError(issues: [ConfigIssue(path: "", message: "/nonexistent/config.json: no such file")])) {
            try ConfigLoader().load(contentsOf: URL(fileURLWithPath: "/nonexistent/config.json"))
        }
    }

    @Test func realEndpointsAreKept() throws {
        var config = ConfigFixtures.demo(setting: "services.tiqav.url", to: "http://api.tiqav.com")
        config = ConfigFixtures.set(config, "sandbox", nil)
        let data = try JSONSerialization.data(withJSONObject: config)
        let parsed = try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/"))
        #expect(parsed.services["tiqav"]?.endpoint == .url(URL(string: "http://api.tiqav.com")!))
    }
}

extension ConfigFixtures {
    static func set(_ object: [String: Any], _ path: String, _ value: Any?) -> [String: Any] {
        setPath(object, path.split(separator: ".").map(String.init), value)
    }

    private static func setPath(_ object: [String: Any], _ keys: [String], _ value: Any?) -> [String: Any] {
        var copy = object
        guard let first = keys.first else { return copy }
        copy[first] = keys.count == 1 ? value : setPath(copy[first] as? [String: Any] ?? [:], Array(keys.dropFirst()), value)
        return copy
    }
}

@Suite struct ConfigSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theSchemaDescribesTheSameTopLevelKeys() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(properties.keys.sorted() == ["$schema", "cluster", "http", "loaders", "sandbox", "services", "state", "subscribers"])
        #expect(schema["additionalProperties"] as? Bool == false)
    }

    /// The schema's durations that must be longer than 0 agree with the validator.
    @Test(arguments: ["30s", "250ms", "5m", "1h", "0ms", "0s", "00m", "30x", "1.5s"])
    func theSchemaAcceptsTheDurationsTheValidatorAccepts(text: String) throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let positive = try #require((definitions["positiveDuration"] as? [String: Any])?["pattern"] as? String)
        let regex = try NSRegularExpression(pattern: positive)
        let schemaAccepts = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        let validatorAccepts = DurationText.parse(text).map { $0 > .zero } ?? false
        #expect(schemaAccepts == validatorAccepts)
        let every = (definitions["schedule"] as? [String: Any])?["every"] as? [String: Any]
        #expect(every?["$ref"] as? String == "#/$defs/positiveDuration")
    }

    /// What the schema can say of the limits `check` enforces: no NUL in a path, loader ids
    /// short enough for their state files.
    @Test func theSchemaRefusesNULInPathsAndOverlongLoaderIDs() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("config.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let path = try #require(definitions["path"] as? [String: Any])
        func matches(_ pattern: String, _ text: String) throws -> Bool {
            try NSRegularExpression(pattern: pattern).firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        let pathPattern = try #require(path["pattern"] as? String)
        #expect(try matches(pathPattern, "var/events.jsonl"))
        #expect(try !matches(pathPattern, "var/events\u{0}.jsonl"))
        let loaders = try #require((schema["properties"] as? [String: Any])?["loaders"] as? [String: Any])
        let idPattern = try #require((loaders["propertyNames"] as? [String: Any])?["pattern"] as? String)
        #expect(try matches(idPattern, String(repeating: "l", count: 208)))
        #expect(try !matches(idPattern, String(repeating: "l", count: 209)))
    }

    @Test func aFileOutputIsResolvedAgainstTheConfigDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let object = ConfigFixtures.set(ConfigFixtures.demo, "subscribers.console.output", "logs/herald.log")
        let configuration = try ConfigLoader(environment: [:])
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: directory)
        let output = try #require(configuration.subscribers["console"]?.logSettings?.output)
        #expect(output == .file("logs/herald.log"))
        await (try HeraldDaemon.standardWriters(relativeTo: configuration.directory)(output)).write("hello")
        #expect(try String(contentsOf: directory.appendingPathComponent("logs/herald.log"), encoding: .utf8) == "hello\n")
    }
}
