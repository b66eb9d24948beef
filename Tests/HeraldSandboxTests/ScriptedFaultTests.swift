import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldSandbox
import HeraldHTTP
import HeraldSync

/// One exchange made by curl in its own process, so every request has a fresh connection and
/// no client retries a dropped one behind the test's back.
struct Exchange {
    var exitCode: Int32
    var status: Int
    var headers: [String: String]
    var body: String

    static func run(_ arguments: [String]) async throws -> Exchange {
        let output = try await Curl.run(["--include"] + arguments)
        let parts = output.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = head.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Exchange(exitCode: output.status, status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

extension Sandbox {
    /// curl arguments for a signed `statuses/update.json` post of `text`.
    func signedUpdate(_ text: String) -> [String] {
        let url = "\(baseURL)/1.1/statuses/update.json"
        let credentials = configuration.credentials
        let oauth = [
            ("oauth_consumer_key", credentials.consumerKey), ("oauth_nonce", UUID().uuidString),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", String(Int(Date().timeIntervalSince1970))),
            ("oauth_token", credentials.token), ("oauth_version", "1.0"),
        ]
        let signature = OAuthVerifier.signature(
            method: "POST", baseURL: url, parameters: oauth + [("status", text)],
            consumerSecret: credentials.consumerSecret, tokenSecret: credentials.tokenSecret)
        let header = (oauth + [("oauth_signature", signature)]).map { "\($0.0)=\"\(FormCodec.encode($0.1))\"" }.joined(separator: ", ")
        return ["-H", "Authorization: OAuth \(header)", "--data", "status=\(FormCodec.encode(text))", url]
    }

    var baasHeaders: [String] {
        ["-H", "X-Application-Id: \(configuration.baasApplicationID)", "-H", "X-Application-Key: \(configuration.baasApplicationKey)",
         "-H", "Content-Type: application/json"]
    }

    func bucketURL(_ bucket: String) -> String { "\(baseURL)/1/\(configuration.baasTenant)/objects/\(bucket)" }
}

@Suite struct ScriptedFaultTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000.25)

    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)))
    func scriptedOutcomesComeInOrderThenRequestsAreServedNormally() async throws {
        let sandbox = try await Sandbox.start(SandboxConfiguration(now: { Self.epoch }))
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/1.1/statuses/update.json", [.status(503), .status(429), .drop, .status(401)])

        let unavailable = try await Exchange.run(sandbox.signedUpdate("hello"))
        #expect(unavailable.status == 503)
        #expect(unavailable.body.contains(#""code":131"#))
        #expect(unavailable.headers["retry-after"] == "1")

        let limited = try await Exchange.run(sandbox.signedUpdate("hello"))
        #expect(limited.status == 429)
        #expect(limited.body.hasPrefix(#"{"errors":[{"code":88,"message":"#))
        #expect(limited.headers["x-rate-limit-reset"] == "1700000002")  // a second or so after `now`
        #expect(limited.headers["x-rate-limit-remaining"] == "0")
        #expect(limited.headers["x-rate-limit-limit"] == "15")
        #expect(limited.headers["retry-after"] == "1")

        let dropped = try await Exchange.run(sandbox.signedUpdate("hello"))
        #expect(dropped.exitCode == 52)  // curl: empty reply from server
        #expect(dropped.status == 0)

        let refused = try await Exchange.run(sandbox.signedUpdate("hello"))
        #expect(refused.status == 401)
        #expect(refused.body.contains(#""code":32"#))
        #expect(sandbox.posts().isEmpty)
        #expect(sandbox.scriptedFaults().isEmpty)

        let posted = try await Exchange.run(sandbox.signedUpdate("hello"))
        #expect(posted.status == 200)
        #expect(sandbox.posts().map(\.text) == ["hello"])
    }

    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)))
    func scriptedOutcomesTakePrecedenceOverRandomFaults() async throws {
        // Every unscripted request fails at random; scripted ones get exactly their outcome.
        let sandbox = try await Sandbox.start(SandboxConfiguration(faults: SandboxFaults(serverErrorRate: 1)))
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/search/random.json", [.status(429), .delay(.zero), .status(404, code: 7)])
        let url = "\(sandbox.baseURL)/search/random.json"

        let limited = try await Exchange.run([url])
        #expect(limited.status == 429)
        #expect(limited.body.contains(#""error":"#))  // Tiqav's shape, not Twitter's
        let served = try await Exchange.run([url])
        #expect(served.status == 200)
        #expect(served.body.hasPrefix(#"[{"id":"#))
        let missing = try await Exchange.run([url])
        #expect(missing.status == 404)
        #expect(missing.body.contains(#""code":7"#))
        let random = try await Exchange.run([url])
        #expect([500, 503].contains(random.status))
    }

    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)))
    func aScriptedFailureHasNoSideEffect() async throws {
        let sandbox = try await Sandbox.start()
        defer { Task { await sandbox.stop() } }
        let url = sandbox.bucketURL("todos")
        try sandbox.script(path: "/1/sandbox-tenant/objects/todos", method: "post", [.status(500), .drop])
        let create = sandbox.baasHeaders + ["--data-binary", #"{"description":"write the report"}"#, url]

        let failed = try await Exchange.run(create)
        #expect(failed.status == 500)
        #expect(failed.body.hasPrefix(#"{"error":"#))
        // A GET to the same path does not consume the POST's script.
        let listed = try await Exchange.run(sandbox.baasHeaders + ["\(url)?count=1&limit=0"])
        #expect(listed.body == #"{"results":[],"count":0}"#)
        let dropped = try await Exchange.run(create)
        #expect(dropped.exitCode == 52)
        #expect(sandbox.objects(inBucket: "todos").isEmpty)

        let created = try await Exchange.run(create)
        #expect(created.status == 201)
        let objects = sandbox.objects(inBucket: "todos")
        #expect(objects.count == 1)
        #expect(objects.first?.json.contains(#""description":"write the report""#) == true)
        #expect(objects.first?.isGenerated == false)
        let counted = try await Exchange.run(["\(sandbox.baseURL)/_sandbox/objects/todos"])
        #expect(counted.body.hasPrefix(#"{"bucket":"todos","count":1,"created":1,"objects":[{"_id":"#))
    }

    @Test func clearingScriptedFaultsDropsThoseOfAPathOrAll() async throws {
        let sandbox = try await Sandbox.start()
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/search/random.json", [.status(503)])
        try sandbox.script(path: "/1.1/statuses/update.json", [.status(429), .drop])
        sandbox.clearScriptedFaults(path: "/search/random.json")
        #expect(sandbox.scriptedFaults() == [SandboxFaultScript(path: "/1.1/statuses/update.json", outcomes: [.status(429), .drop])])
        sandbox.clearScriptedFaults()
        #expect(sandbox.scriptedFaults().isEmpty)
    }

    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)))
    func theControlPathScriptsShowsAndClears() async throws {
        let sandbox = try await Sandbox.start()
        defer { Task { await sandbox.stop() } }
        let control = "\(sandbox.baseURL)/_sandbox/faults"
        let script = #"{"path": "/search/random.json", "responses": [503, "drop", {"status": 403, "code": 187}, {"delay": 0.25}]}"#
        let posted = try await Exchange.run(["--data", script, control])
        #expect(posted.status == 200)
        let shown = #"{"scripts":[{"path":"/search/random.json","method":null,"responses":[503,"drop",{"status":403,"code":187},{"delay":0.25}]}]}"#
        #expect(posted.body == shown)
        #expect(sandbox.scriptedFaults() == [SandboxFaultScript(
            path: "/search/random.json", outcomes: [.status(503), .drop, .status(403, code: 187), .delay(.milliseconds(250))])])

        // Posting the same path again appends; a request consumes the first outcome.
        _ = try await Exchange.run(["--data", #"{"path": "/search/random.json", "responses": [401]}"#, control])
        let unavailable = try await Exchange.run(["\(sandbox.baseURL)/search/random.json"])
        #expect(unavailable.status == 503)
        let left = try await Exchange.run([control])
        #expect(left.body == #"{"scripts":[{"path":"/search/random.json","method":null,"responses":["drop",{"status":403,"code":187},{"delay":0.25},401]}]}"#)

        _ = try await Exchange.run(["--data", #"{"path": "/search.json", "method": "GET", "responses": [500]}"#, control])
        let clearedOne = try await Exchange.run(["-X", "DELETE", "\(control)?path=/search/random.json"])
        #expect(clearedOne.body == #"{"scripts":[{"path":"/search.json","method":"GET","responses":[500]}]}"#)
        let cleared = try await Exchange.run(["-X", "DELETE", control])
        #expect(cleared.body == #"{"scripts":[]}"#)
        let served = try await Exchange.run(["\(sandbox.baseURL)/search/random.json"])
        #expect(served.status == 200)
        let wrongMethod = try await Exchange.run(["-X", "PUT", control])
        #expect(wrongMethod.status == 405)
    }

    /// (the body posted, a fragment of the error message expected)
    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)), arguments: [
        ("not json", "the body is not valid JSON"),
        ("[503]", "expected a JSON object"),
        (#"{"responses": [503]}"#, "path: required"),
        (#"{"path": 3, "responses": [503]}"#, "path: expected a string, got 3"),
        (#"{"path": "x", "responses": [503]}"#, #"path: "x" must start with /"#),
        (#"{"path": "/_sandbox/faults", "responses": [503]}"#, "is a control path"),
        (#"{"path": "/x"}"#, "responses: required"),
        (#"{"path": "/x", "responses": 503}"#, "responses: expected an array"),
        (#"{"path": "/x", "responses": [503, 200]}"#, "responses[1]: 200 is not an error status (400...599)"),
        (#"{"path": "/x", "responses": ["dorp"]}"#, #"responses[0]: "dorp" is not a status"#),
        (#"{"path": "/x", "responses": [{"delay": -1}]}"#, "responses[0].delay: expected seconds in 0...3600, got -1"),
        (#"{"path": "/x", "responses": [{"status": 503, "retry": 1}]}"#, "responses[0].retry: unknown key"),
        (#"{"path": "/x", "responses": [503], "times": 2}"#, "times: unknown key"),
        (#"{"path": "/x", "method": 1, "responses": [503]}"#, "method: expected a string"),
    ])
    func aBadScriptIsRefusedWithAClearMessageAndQueuesNothing(body: String, message: String) async throws {
        let sandbox = try await Sandbox.start()
        defer { Task { await sandbox.stop() } }
        let refused = try await Exchange.run(["--data", body, "\(sandbox.baseURL)/_sandbox/faults"])
        #expect(refused.status == 400)
        let error = try JSONSerialization.jsonObject(with: Data(refused.body.utf8)) as? [String: String]
        #expect(error?.keys.sorted() == ["error"])
        #expect(error?["error"]?.contains(message) == true, "got \(refused.body)")
        #expect(sandbox.scriptedFaults().isEmpty)
        let health = try await Exchange.run(["\(sandbox.baseURL)/_sandbox/health"])
        #expect(health.status == 200)
    }

    @Test func theLibraryRefusesBadScriptsAndMatchesPrefixesAndMethods() throws {
        #expect(throws: SandboxScriptError("responses[0]: 302 is not an error status (400...599)")) {
            try FaultScript().append(SandboxFaultScript(path: "/1.1/statuses/update.json", outcomes: [.status(302)]))
        }
        #expect(throws: SandboxScriptError.self) { try FaultScript().append(SandboxFaultScript(path: "/_sandbox/posts", outcomes: [.drop])) }
        #expect(throws: SandboxScriptError.self) { try FaultScript().append(SandboxFaultScript(path: "/x", outcomes: [.delay(.seconds(-1))])) }

        let script = FaultScript()
        try script.append(SandboxFaultScript(path: "/1/demo/objects/*", method: "put", outcomes: [.status(409)]))
        try script.append(SandboxFaultScript(path: "/1/demo/objects/todos", outcomes: [.drop]))
        func request(_ method: String, _ path: String) -> SandboxRequest {
            SandboxRequest(method: method, rawPath: path, rawQuery: "", headers: [], body: Data())
        }
        #expect(script.next(for: request("GET", "/1/demo/objects/todos/5a1e")) == nil)
        #expect(script.next(for: request("PUT", "/1/demo/objects/todos/5a1e")) == .status(409))
        #expect(script.next(for: request("PUT", "/1/demo/objects/todos/5a1e")) == nil)
        #expect(script.next(for: request("GET", "/1/demo/objects/todos?where=x")) == nil)  // the query is not the path
        #expect(script.next(for: request("GET", "/1/demo/objects/todos")) == .drop)
        #expect(script.remaining().isEmpty)
    }
}

@Suite struct GrowingTodoBucketTests {
    @Test(.enabled(if: Curl.isAvailable), .timeLimit(.minutes(5)))
    func theTodoBucketGrowsOneTodoPerIntervalOfTheInjectedClock() async throws {
        let time = ManualDate(Date(timeIntervalSince1970: 1_700_000_000))
        let sandbox = try await Sandbox.start(SandboxConfiguration(todoInterval: 15, now: { time.now }))
        defer { Task { await sandbox.stop() } }
        let url = sandbox.bucketURL("todos")
        let empty = try await Exchange.run(sandbox.baasHeaders + ["\(url)?count=1"])
        #expect(empty.body == #"{"results":[],"count":0}"#)

        time.advance(by: 31)
        let grown = try await Exchange.run(sandbox.baasHeaders + ["\(url)?order=updatedAt"])
        #expect(grown.body.contains(#""createdAt":"2023-11-14T22:13:35.000Z""#))  // the first beat: start + 15 s
        #expect(grown.body.contains(#""updatedAt":"2023-11-14T22:13:50.000Z""#))  // the second: start + 30 s
        #expect(grown.body.contains(#""description":"Buy milk on the way home #1","done":false"#))
        #expect(grown.body.contains(#""description":"牛乳を買って帰る #2","done":false"#))
        #expect(!grown.body.contains("#3"))

        // A client's todo lands among them; the grown ones keep coming.
        let created = try await Exchange.run(sandbox.baasHeaders + ["--data-binary", #"{"description":"mine"}"#, url])
        #expect(created.status == 201)
        time.advance(by: 15)
        let objects = sandbox.objects(inBucket: "todos")
        #expect(objects.map(\.isGenerated) == [true, true, false, true])
        #expect(objects.last?.json.contains("#3") == true)
        let counted = try await Exchange.run(["\(sandbox.baseURL)/_sandbox/objects/todos"])
        #expect(counted.body.hasPrefix(#"{"bucket":"todos","count":4,"created":1,"#))
        #expect(sandbox.objects(inBucket: "other").isEmpty)
    }

    @Test func withoutATodoIntervalBucketsStayAsClientsLeaveThem() async throws {
        let time = ManualDate(Date(timeIntervalSince1970: 1_700_000_000))
        let sandbox = try await Sandbox.start(SandboxConfiguration(now: { time.now }))
        time.advance(by: 86_400)
        #expect(sandbox.objects(inBucket: "todos").isEmpty)
        await sandbox.stop()
    }

    @Test func aCustomBucketGrowsAndTheCountIsCapped() {
        var state = BaaSEmulator.State()
        let start = Date(timeIntervalSince1970: 0)
        state.growTodos(in: "chores", now: start.addingTimeInterval(45), start: start, interval: 15)
        #expect(state.buckets["chores"]?.count == 3)
        state.growTodos(in: "chores", now: start.addingTimeInterval(1e12), start: start, interval: 0.001)
        #expect(state.buckets["chores"]?.count == 100_000)
        var idle = BaaSEmulator.State()
        idle.growTodos(in: "chores", now: start.addingTimeInterval(45), start: start, interval: nil)
        idle.growTodos(in: "chores", now: start.addingTimeInterval(45), start: start, interval: 0)
        #expect(idle.buckets.isEmpty)
    }
}
