import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldNATS
import HeraldSync
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The cluster rig with a nemesis: nats-servers (one, or three whose cluster routes each go
/// through a ``FaultProxy`` per direction), one sandbox, three `herald run` daemons (a, b, c)
/// each reaching every server through a proxy of its own, a plain NATS client watching the
/// event stream and another recording every loader state the state bucket stores. The test
/// switches the proxies, stops and continues daemons and servers, kills and restarts them; at
/// the end ``history(exits:expected:)`` gathers what ``NemesisChecker`` reads.
final class NemesisRig: Sendable {
    static let nodes = ["a", "b", "c"]
    /// The sandbox grows a todo and a status every second (slower than ``ClusterRig``'s: a
    /// slowed or partitioned cluster must catch up on its posts afterwards).
    static let sandboxConfig = """
        {"services": {"twitter": {"url": "sandbox", "auth": \(PostReliabilityTests.auth)},
                      "baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}},
         "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
         "sandbox": {"port": 0, "statusInterval": "1s", "todoInterval": "1s"}}
        """
    let herald: URL
    let directory: URL
    let leaseTTL: Duration
    let servers: [NATSServerProcess]
    /// `n1→n2`: the route server n1 solicits to n2.
    let routes: [String: FaultProxy]
    /// Node → one proxy per server (by the servers' index).
    let links: [String: [FaultProxy]]
    let sandbox: PostReliabilityTests.SandboxProcess
    let watcher: StreamWatcher
    let states: StateObserver
    private let running = SyncLock<[String: ChildProcess]>([:])
    private let ended = SyncLock<[(node: String, log: String)]>([])

    init(herald: URL, servers count: Int, leaseTTL: Duration) async throws {
        self.herald = herald
        self.leaseTTL = leaseTTL
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-nemesis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var routes: [String: FaultProxy] = [:]
        var started: [NATSServerProcess] = []
        if count == 3 {
            started = try await NATSServerProcess.startCluster(count: 3) { ports, index in
                // The route proxies lead to this attempt's ports (made again with them).
                if index == 0 {
                    routes = [:]
                    for from in 0..<3 {
                        for to in 0..<3 where to != from {
                            routes["n\(from + 1)→n\(to + 1)"] = try FaultProxy(name: "n\(from + 1)→n\(to + 1)", target: ports[to])
                        }
                    }
                }
                let solicited = (0..<3).filter { $0 != index }.compactMap { routes["n\(index + 1)→n\($0 + 1)"].map { "nats://" + $0.address } }
                // Nothing bypasses the proxies: the address gossiped to other servers leads nowhere
                // (each solicits its routes explicitly), and no client learns a server's own address.
                return ["--server_name", "n\(index + 1)", "--cluster_name", "herald", "--cluster", "nats://127.0.0.1:\(ports[index])",
                        "--routes", solicited.joined(separator: ","), "--cluster_advertise", "127.0.0.1:1", "--no_advertise"]
            }
        } else {
            started = [try await NATSServerProcess.start(arguments: ["--no_advertise"])]
        }
        servers = started
        self.routes = routes
        var links: [String: [FaultProxy]] = [:]
        for node in Self.nodes {
            links[node] = try started.enumerated().map { try FaultProxy(name: "\(node)→n\($0.offset + 1)", target: $0.element.port) }
        }
        self.links = links
        sandbox = try await .start(in: directory, herald: herald, config: Self.sandboxConfig)
        // Straight to every server (no proxy): a test's own view survives the faults it makes.
        watcher = try await StreamWatcher(servers: started.map(\.url))
        states = try await StateObserver(servers: started.map(\.url))
        for node in Self.nodes { try start(node) }
    }

    private func config(_ node: String) throws -> URL {
        let root = directory.appendingPathComponent(node)
        let url = root.appendingPathComponent("config.json")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let index = Self.nodes.firstIndex(of: node) ?? 0
        let proxies = links[node] ?? []
        let list = proxies.indices.map { "\"nats://\(proxies[($0 + index) % proxies.count].address)\"" }.joined(separator: ", ")
        let ttl = "\(leaseTTL.components.seconds)s"
        try Data("""
            {"state": "\(root.path)/state",
             "services": {"twitter": {"url": "\(sandbox.url.absoluteString)", "auth": \(PostReliabilityTests.auth)},
                          "baas": {"url": "\(sandbox.url.absoluteString)", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}},
             "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1s"},
                         "itmedia": {"kind": "timeline", "service": "twitter", "timeline": "user", "screenName": "itmedia", "count": 5, "every": "1s"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["cluster.>", "loader.>", "post.>"], "level": "info"},
               "archive": {"kind": "file", "topics": [">"], "path": "\(root.path)/events.jsonl"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "500ms"},
                         "rules": {"todo-tweet": {"on": "loader.todos.finished", "for": "new", "service": "twitter", "text": "New todo: {{description}}"}}}},
             "cluster": {"servers": [\(list)], "node": "\(node)", "replicas": \(servers.count), "leaseTTL": "\(ttl)", "ackWait": "\(ttl)",
                         "connectWait": "2m", "intentSecret": "rig-intent-secret-of-at-least-32-bytes"}}
            """.utf8).write(to: url)
        return url
    }

    /// Starts (or restarts) `node`'s daemon.
    func start(_ node: String) throws {
        let process = try ChildProcess(herald, ["run", "--config", try config(node).path])
        running.withLock { $0[node] = process }
    }

    func daemon(_ node: String) -> ChildProcess? { running.withLock { $0[node] } }

    /// Waits until every daemon says it runs; false (with the logs recorded) if one did not.
    func waitUntilRunning() async -> Bool {
        for node in Self.nodes {
            guard await daemon(node)?.waitForStandardError({ $0.contains("herald: running") }) == true else {
                Issue.record("node \(node) did not start: \(daemon(node)?.stderr ?? "")")
                return false
            }
        }
        return true
    }

    /// SIGSTOP / SIGCONT.
    func pause(_ node: String) { daemon(node)?.signal(SIGSTOP) }
    func resume(_ node: String) { daemon(node)?.signal(SIGCONT) }

    /// SIGKILL, waiting for the exit; its log is kept for the history.
    func kill9(_ node: String) async {
        guard let process = running.withLock({ $0.removeValue(forKey: node) }) else { return }
        process.signal(SIGKILL)
        process.signal(SIGCONT)
        let finished = await process.finish(within: .seconds(60))
        ended.withLock { $0.append((node, finished?.stderr ?? process.stderr)) }
    }

    /// Every proxy passes again.
    func healAll() {
        for proxy in links.values.flatMap({ $0 }) + routes.values { proxy.mode = .pass }
    }

    /// Every proxy of `node` (to every server) set to `mode`.
    func cut(_ node: String, _ mode: FaultProxy.Mode) {
        for proxy in links[node] ?? [] { proxy.mode = mode }
    }

    /// Every daemon's log so far: the runs that ended, then the running ones.
    var logs: [(node: String, log: String)] {
        ended.withLock { $0 } + running.withLock { $0.map { ($0.key, $0.value.stderr) } }
    }

    /// One daemon's log so far (every run).
    func log(_ node: String) -> String { logs.filter { $0.node == node }.map(\.log).joined(separator: "\n") }

    /// The node whose lease line for `loader` came last in the logs (the holder, once settled).
    func lastAcquired(_ loader: String) -> String? {
        tenures().filter { $0.loader == loader }.max { $0.time < $1.time }?.node
    }

    /// Resumes, heals and stops every daemon with SIGTERM; their exit statuses.
    func stopDaemons() async -> [String: Int32] {
        for proxy in links.values.flatMap({ $0 }) + routes.values { proxy.mode = .pass }
        let left = running.withLock { running in defer { running = [:] }; return running }
        for process in left.values {
            process.signal(SIGCONT)
            process.signal(SIGTERM)
        }
        var statuses: [String: Int32] = [:]
        for (node, process) in left {
            let finished = await process.finish(within: .seconds(120))
            statuses[node] = finished?.status ?? -1
            ended.withLock { $0.append((node, finished?.stderr ?? process.stderr)) }
        }
        return statuses
    }

    /// Everything else, then the directory.
    func tearDown() async {
        _ = await stopDaemons()
        await states.close()
        await watcher.close()
        await sandbox.stop()
        for server in servers { await server.stop() }
        for proxy in links.values.flatMap({ $0 }) + routes.values { proxy.shutdown() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// When each node took each lease, from the logs.
    func tenures() -> [NemesisHistory.Tenure] {
        var tenures: [NemesisHistory.Tenure] = []
        for (node, log) in logs {
            for line in log.split(separator: "\n") where line.contains("cluster.lease.") && line.contains(".acquired") {
                guard let range = line.range(of: #"cluster\.lease\.[A-Za-z0-9_-]+\.acquired"#, options: .regularExpression),
                      let time = try? Date(String(line.prefix { $0 != " " }), strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
                else { continue }
                let loader = line[range].dropFirst("cluster.lease.".count).dropLast(".acquired".count)
                tenures.append(.init(loader: String(loader), node: node, time: time))
            }
        }
        return tenures
    }

    /// Each todo's post text now.
    func todoTexts() async throws -> [String] {
        let (data, _) = try await URLSession.shared.data(from: sandbox.url.appendingPathComponent("_sandbox/objects/todos"))
        let objects = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["objects"] as? [[String: Any]] ?? []
        return objects.compactMap { $0["description"] as? String }.map { "New todo: \($0)" }
    }

    /// Scripts the sandbox's next answers on `path` (`responses` as `/_sandbox/faults` takes them).
    func script(_ path: String, _ responses: String) async throws {
        var request = URLRequest(url: sandbox.url.appendingPathComponent("_sandbox/faults"))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"path": "\#(path)", "responses": \#(responses)}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// How many scripted answers the sandbox still holds.
    func scriptedLeft() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: sandbox.url.appendingPathComponent("_sandbox/faults"))
        let scripts = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["scripts"] as? [[String: Any]] ?? []
        return scripts.reduce(0) { $0 + (($1["responses"] as? [Any])?.count ?? ($1["outcomes"] as? [Any])?.count ?? 1) }
    }

    /// Waits until every text of `expected` is posted.
    func waitUntilPosted(_ expected: [String]) async throws {
        try await until("every todo posted (\(expected.count))") { Set(try await sandbox.posts()).isSuperset(of: expected) }
    }

    /// Waits until `condition` holds, looking again at each stream message and at least every
    /// quarter of a second. A daemon that exits meanwhile ends the wait at once, and so does
    /// `limit` passing (a hang guard, far beyond what a busy machine needs): each throws a
    /// ``NemesisFailure`` naming what the test waited for and how the rig stood.
    func until(_ what: String, within limit: Duration = .seconds(300), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while true {
            if try await condition() { return }
            // The test's time limit ran out: the rig is torn down by the scenario's catch.
            try Task.checkCancellation()
            if let node = exitedDaemon() {
                throw NemesisFailure(message: "waiting for \(what): node \(node) exited; its log ends:\n\(String(log(node).suffix(3000)))")
            }
            guard ContinuousClock.now < deadline else {
                throw NemesisFailure(message: "waited \(limit) for \(what) (a hang guard); \(await describe())")
            }
            await watcher.next(within: .milliseconds(250))
        }
    }

    /// A daemon that exited while the rig did not stop it.
    func exitedDaemon() -> String? {
        running.withLock { running in running.sorted { $0.key < $1.key }.first { !$0.value.isRunning }?.key }
    }

    /// Deletes `consumer` of `stream` through the JetStream API (`$JS.API.CONSUMER.DELETE`).
    func deleteConsumer(stream: String, consumer: String) async throws {
        let reply = try await watcher.connection.request("$JS.API.CONSUMER.DELETE.\(stream).\(consumer)", timeout: .seconds(5))
        let object = try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any]
        guard object?["success"] as? Bool == true else {
            throw NemesisFailure(message: "deleting the consumer \(consumer) of \(stream): \(String(decoding: reply.payload, as: UTF8.self))")
        }
    }

    /// How the rig stands, for a hang guard's message: each node's last lease and connection
    /// lines, the lease holder the bucket names, the proxies' modes, the last stream messages.
    func describe() async -> String {
        var lines: [String] = ["lease bucket: todos held by \(await leaseHolder("todos") ?? "nobody")"]
        for node in Self.nodes {
            let log = daemon(node)?.stderr ?? "(not running)"
            let last = log.split(separator: "\n").filter { $0.contains("cluster.") }.suffix(4).joined(separator: " | ")
            lines.append("\(node): \((links[node] ?? []).map { "\($0.name) \($0.mode)" }.joined(separator: ", ")); \(last)")
        }
        lines.append("routes: " + routes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.mode)" }.joined(separator: ", "))
        lines.append("last messages: " + watcher.events.suffix(5).map { "\($0.subject) by \($0.node)" }.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }

    /// The node the lease bucket names as `loader`'s holder now (nil: none, or no answer).
    func leaseHolder(_ loader: String) async -> String? { await lease(loader)?.node }

    /// `loader`'s lease in the bucket now: the node it names and its revision (nil: none, or no answer).
    func lease(_ loader: String) async -> (node: String, revision: UInt64)? {
        guard let bucket = try? await watcher.connection.jetStream(timeout: .seconds(3)).keyValue("herald_leases"),
              let entry = try? await bucket.get("loader.\(loader)"),
              let object = try? JSONSerialization.jsonObject(with: Data(entry.value)) as? [String: Any],
              let node = object["node"] as? String else { return nil }
        return (node, entry.revision)
    }

    /// When `log` last says its node took `loader`'s lease, when that is its last lease line
    /// (the node counts the lease held); nil otherwise.
    static func holdingSince(_ loader: String, in log: String) -> Date? {
        guard let acquired = log.range(of: "cluster.lease.\(loader).acquired", options: .backwards) else { return nil }
        if let lost = log.range(of: "cluster.lease.\(loader).lost", options: .backwards), lost.lowerBound > acquired.lowerBound { return nil }
        let lineStart = log[..<acquired.lowerBound].lastIndex(of: "\n").map { log.index(after: $0) } ?? log.startIndex
        let line = log[lineStart...]
        return try? Date(String(line.prefix { $0 != " " }), strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
    }

    /// Waits until the bucket and the holder agree: the bucket names a node, that node's
    /// running daemon counts the lease held, and it announced a load after taking it (and after
    /// `since`). The node, and its log as it was when they agreed (to count its lines from).
    /// Read before each fault, so a test never acts on a holder that went stale meanwhile.
    func settledHolder(_ loader: String = "todos", other previous: String? = nil, since: Date = .distantPast) async throws -> (node: String, log: String) {
        var settled: (node: String, log: String)?
        let what = previous.map { "a node other than \($0) holding \(loader)'s lease and loading" } ?? "a settled holder of \(loader)'s lease"
        try await until(what) {
            guard let node = await leaseHolder(loader), node != previous, let log = daemon(node)?.stderr,
                  let acquired = Self.holdingSince(loader, in: log) else { return false }
            let after = max(acquired, since)
            guard watcher.events.contains(where: { $0.subject == "herald.loader.\(loader).finished" && $0.node == node && $0.time > after }) else { return false }
            settled = (node, log)
            return true
        }
        guard let settled else { throw NemesisFailure(message: "no holder of \(loader)") }
        return settled
    }

    /// The server (`n1`…) leading `stream`'s replicas, from `$JS.API.STREAM.INFO` (nil: no leader, no answer).
    func streamLeader(_ stream: String) async -> String? {
        guard let reply = try? await watcher.connection.request("$JS.API.STREAM.INFO.\(stream)", timeout: .seconds(3)),
              let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any],
              let cluster = object["cluster"] as? [String: Any], let leader = cluster["leader"] as? String, !leader.isEmpty else { return nil }
        return leader
    }

    /// The ids (`origin.id`) of the events `node`'s archive holds from other nodes, each as many times as imported.
    func importedIDs(_ node: String) throws -> [String] {
        let text = try String(contentsOf: directory.appendingPathComponent("\(node)/events.jsonl"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return ((object?["event"] as? [String: Any])?["origin"] as? [String: Any])?["id"] as? String
        }
    }

    /// What the checker reads, once the daemons stopped.
    func history(exits: [String: Int32], expected: [String]) async throws -> NemesisHistory {
        var history = NemesisHistory()
        history.expectedPosts = expected
        history.allowedPosts = try await todoTexts()
        history.posts = try await sandbox.posts().filter { $0.hasPrefix("New todo: ") }
        let stored = try await watcher.storedEvents()
        history.storedIDs = stored.map(\.id)
        for event in stored {
            let parts = event.subject.split(separator: ".")
            if parts.count == 4, parts[1] == "loader", parts[3] == "finished" {
                history.loads.append(.init(loader: String(parts[2]), node: event.node, time: event.time, items: event.newItems))
            } else if parts.count == 4, parts[1] == "post", let key = event.key, parts[3] == "sent" || parts[3] == "failed" {
                history.sends.append(.init(node: event.node, key: key, duplicate: event.duplicate, failed: parts[3] == "failed"))
            }
        }
        history.tenures = tenures()
        history.saves = states.saves
        history.exits = exits
        return history
    }

    /// Where a failed run's seed and history go: $HERALD_TEST_OUTPUT, or .build/test-output.
    static var outputDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["HERALD_TEST_OUTPUT"] { return URL(fileURLWithPath: path) }
        return BuiltProducts.packageRoot.appendingPathComponent(".build/test-output")
    }
}

/// A plain NATS client recording every loader state the state bucket stores (key
/// `loader.<id>`), through a pull consumer of its own on the bucket's stream.
final class StateObserver: Sendable {
    let connection: NATSConnection
    private let recorded = SyncLock<[NemesisHistory.Save]>([])
    private let task = SyncLock<Task<Void, Never>?>(nil)

    init(servers: [String]) async throws {
        var options = NATSConnectionOptions(servers: servers, name: "state-observer")
        options.ignoreDiscoveredServers = true
        options.pingInterval = .seconds(1)
        connection = try NATSConnection(options: options)
        try await connection.connect()
    }

    var saves: [NemesisHistory.Save] { recorded.withLock { $0 } }

    /// Starts reading (the bucket exists once a daemon made it: call after they run).
    func start() {
        let js = connection.jetStream(timeout: .seconds(5))
        let work = Task { [self] in
            var consumer = false
            while !Task.isCancelled {
                do {
                    if !consumer {
                        var configuration = ConsumerConfiguration(durableName: "nemesis-states", ackPolicy: ConsumerConfiguration.AckPolicy.none, filterSubject: "$KV.herald_state.loader.>")
                        configuration.deliverPolicy = .all
                        _ = try await js.createConsumer(stream: "KV_herald_state", configuration)
                        consumer = true
                    }
                    for message in try await js.fetch(stream: "KV_herald_state", consumer: "nemesis-states", batch: 100, expires: .seconds(1)) {
                        let loader = String(message.message.subject.dropFirst("$KV.herald_state.loader.".count))
                        guard let object = try? JSONSerialization.jsonObject(with: Data(message.message.payload)) as? [String: Any] else { continue }
                        let save = NemesisHistory.Save(loader: loader, revision: message.metadata.streamSequence,
                                                       seen: object["seen"] as? [String] ?? [], sinceID: object["sinceID"] as? String)
                        recorded.withLock { $0.append(save) }
                    }
                } catch {
                    // A server paused or partitioned: try again shortly (a retry's pace, not a wait).
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        task.withLock { $0 = work }
    }

    func close() async {
        let work = task.withLock { $0 }
        work?.cancel()
        await work?.value
        await connection.close()
    }
}
