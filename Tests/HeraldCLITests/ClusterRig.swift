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

/// What the process tests of a cluster run: nats-servers, one sandbox, three `herald run`
/// daemons (nodes a, b, c) pulling a todo loader and a timeline loader every second and posting
/// each new todo, and a second NATS client subscribed to `herald.>`.
final class ClusterRig: Sendable {
    static let nodes = ["a", "b", "c"]
    /// The sandbox grows a todo and a status every 300 ms.
    static let sandboxConfig = """
        {"services": {"twitter": {"url": "sandbox", "auth": \(PostReliabilityTests.auth)},
                      "baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}},
         "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
         "sandbox": {"port": 0, "statusInterval": "300ms", "todoInterval": "300ms"}}
        """

    let herald: URL
    let directory: URL
    let servers: [NATSServerProcess]
    let sandbox: PostReliabilityTests.SandboxProcess
    let watcher: StreamWatcher
    private let running = SyncLock<[String: ChildProcess]>([:])

    /// Starts one server, or a three-server cluster, the sandbox, the watcher (on the last
    /// server) and the daemons.
    init(herald: URL, clusterOfThree: Bool) async throws {
        self.herald = herald
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if clusterOfThree {
            servers = try await NATSServerProcess.startCluster(count: 3) { routes, index in
                let others = routes.enumerated().filter { $0.offset != index }.map { "nats://127.0.0.1:\($0.element)" }
                return ["--server_name", "n\(index + 1)", "--cluster_name", "herald", "--cluster", "nats://127.0.0.1:\(routes[index])",
                        "--routes", others.joined(separator: ",")]
            }
        } else {
            servers = [try await NATSServerProcess.start()]
        }
        sandbox = try await .start(in: directory, herald: herald, config: Self.sandboxConfig)
        watcher = try await StreamWatcher(servers: [servers[servers.count - 1].url])
        for (index, node) in Self.nodes.enumerated() {
            let urls = servers.indices.map { servers[($0 + index) % servers.count].url }
            let config = try config(node: node, servers: urls, replicas: servers.count)
            running.withLock { $0[node] = try? ChildProcess(herald, ["run", "--config", config.path]) }
        }
        #expect(running.withLock { $0.count } == 3)
    }

    private func config(node: String, servers: [String], replicas: Int) throws -> URL {
        let root = directory.appendingPathComponent(node)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let list = servers.map { "\"\($0)\"" }.joined(separator: ", ")
        let url = root.appendingPathComponent("config.json")
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
             "cluster": {"servers": [\(list)], "node": "\(node)", "replicas": \(replicas), "leaseTTL": "10s", "ackWait": "5s", "connectWait": "2m",
                         "intentSecret": "rig-intent-secret-of-at-least-32-bytes"}}
            """.utf8).write(to: url)
        return url
    }

    func daemon(_ node: String) -> ChildProcess? { running.withLock { $0[node] } }

    /// What each daemon wrote to standard error.
    var logs: [String: String] { running.withLock { $0.mapValues(\.stderr) } }

    /// Kills `node` with SIGKILL and waits for it to exit.
    func kill9(_ node: String) async -> ChildProcess.Finished? {
        guard let process = running.withLock({ $0.removeValue(forKey: node) }) else { return nil }
        process.signal(SIGKILL)
        return await process.finish(within: .seconds(60))
    }

    /// Stops every daemon left with SIGTERM; their logs and exit statuses.
    func stopDaemons() async -> [String: ChildProcess.Finished] {
        let left = running.withLock { running in defer { running = [:] }; return running }
        for process in left.values { process.signal(SIGTERM) }
        var finished: [String: ChildProcess.Finished] = [:]
        for (node, process) in left { finished[node] = await process.finish(within: .seconds(120)) }
        return finished
    }

    /// Everything else, then the directory.
    func tearDown() async {
        _ = await stopDaemons()
        await watcher.close()
        await sandbox.stop()
        for server in servers { await server.stop() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The descriptions of the sandbox's todos now.
    func todos() async throws -> [String] {
        let (data, _) = try await URLSession.shared.data(from: sandbox.url.appendingPathComponent("_sandbox/objects/todos"))
        let objects = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["objects"] as? [[String: Any]] ?? []
        return objects.compactMap { $0["description"] as? String }
    }

    /// The events of node `node`'s archive it published itself (not imported), by id, on `prefixes`.
    func archivedLocalIDs(_ node: String, topics prefixes: [String]) throws -> Set<String> {
        let text = try String(contentsOf: directory.appendingPathComponent("\(node)/events.jsonl"), encoding: .utf8)
        var ids = Set<String>()
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let topic = object["topic"] as? String, prefixes.contains(where: topic.hasPrefix), let id = object["id"] as? String else { continue }
            let event = object["event"] as? [String: Any]
            if event?["origin"] != nil, event?["node"] != nil { continue }
            ids.insert(id)
        }
        return ids
    }
}

/// The stream could not be read to its end.
struct StreamWatcherError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// One message of the event stream as the tests read it.
struct StreamedEvent: Sendable {
    var subject: String
    var id: String
    var node: String
    var time: Date
    /// The ids of the new items a loader announced (`newTodos[]._id`, `newStatuses[].id_str`).
    var newItems: [String]
    /// A post outcome's idempotency key (`post.<rule>.sent` / `.failed`).
    var key: String?
    /// Whether a `post.<rule>.sent` was a duplicate the service (or the record) recognised.
    var duplicate = false

    init?(_ message: NATSMessage) {
        guard let id = message.headers?["Nats-Msg-Id"], let node = message.headers?["Herald-Node"],
              let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
              let stamp = object["time"] as? String, let time = try? Date(stamp, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
        else { return nil }
        subject = message.subject
        self.id = id
        self.node = node
        self.time = time
        let event = object["event"] as? [String: Any] ?? [:]
        let todos = (event["newTodos"] as? [[String: Any]] ?? []).compactMap { $0["_id"] as? String }
        let statuses = (event["newStatuses"] as? [[String: Any]] ?? []).compactMap { $0["id_str"] as? String }
        newItems = todos + statuses
        key = event["key"] as? String
        duplicate = event["duplicate"] as? Bool ?? false
    }
}

/// A NATS client that is not a Herald node, subscribed to `herald.>` from the start: it records
/// every message, lets a test await one, and reads the whole stream at the end.
final class StreamWatcher: Sendable {
    private struct State {
        var events: [StreamedEvent] = []
        var waiters: [UInt64: (match: @Sendable ([StreamedEvent]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter: UInt64 = 0
        var ended = false
    }
    let connection: NATSConnection
    private let state = SyncLock(State())

    /// Connects to `servers` (the next one when one goes away), never to a server they announce.
    init(servers: [String]) async throws {
        var options = NATSConnectionOptions(servers: servers, name: "watcher")
        options.ignoreDiscoveredServers = true
        // A stopped (SIGSTOP) server is left for the next within seconds, not the default's
        // minutes (two unanswered pings 120 s apart): the test's view must not go blind.
        options.pingInterval = .seconds(1)
        connection = try NATSConnection(options: options)
        try await connection.connect()
        let subscription = try connection.subscribe("herald.>")
        try await connection.flush()
        Task { [self] in
            for await message in subscription {
                if let event = StreamedEvent(message) { record(event) }
            }
            finish()
        }
    }

    var events: [StreamedEvent] { state.withLock { $0.events } }

    /// Returns once `condition` holds for the messages seen so far; false if the subscription
    /// ended first, or `limit` passed without it (a hang guard, not a pace).
    @discardableResult
    func wait(within limit: Duration = .seconds(300), until condition: @escaping @Sendable ([StreamedEvent]) -> Bool) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let guardTask = Task { [self] in
            try? await Task.sleep(for: limit)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool? in
                if condition(state.events) { return true }
                if state.ended { return false }
                state.waiters[id] = (condition, continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Returns once `count` more messages arrived, or `limit` passed; whether they did.
    @discardableResult
    func next(_ count: Int = 1, within limit: Duration = .seconds(300)) async -> Bool {
        let seen = events.count
        return await wait(within: limit) { $0.count >= seen + count }
    }

    private func record(_ event: StreamedEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.events.append(event)
            let all = state.events
            var ready: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in state.waiters where waiter.match(all) {
                ready.append(waiter.continuation)
                state.waiters[id] = nil
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    private func finish() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }

    /// Every message stored in the stream `HERALD`, read through consumers of the test's own.
    ///
    /// A cluster that just lost a server may be electing a leader (of the stream, or of a consumer
    /// just made), and a JetStream API request that arrives meanwhile gets no reply: each request
    /// is asked again after 5 s without one, as many as 12 times (seen once: a single 30 s wait for
    /// the consumer ran out). A fetch that gets no reply may still have been served, so reading
    /// goes on through a new consumer that starts after the last stream sequence read: nothing is
    /// read twice or skipped (seen once: a fetch from a consumer made a moment before got none).
    func storedEvents() async throws -> [StreamedEvent] {
        let js = connection.jetStream(timeout: .seconds(5))
        var attempt = 1
        func retried<T>(_ request: () async throws -> T) async throws -> T {
            while true {
                do {
                    return try await request()
                } catch let error as NATSError where error.kind == .timeout && attempt < 12 {
                    attempt += 1
                } catch let error as JetStreamError where error.code == 503 && attempt < 12 {
                    // "JetStream system temporarily unavailable" (10008): a stream or its
                    // consumer electing a leader just after a partition healed; asked again.
                    attempt += 1
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
        }
        let total = try await retried { try await js.streamInfo("HERALD").state.messages }
        var stored: [StreamedEvent] = []
        var read: UInt64 = 0
        var last: UInt64?
        while read < total {
            let consumer = "test-reader-\(attempt)"
            var configuration = ConsumerConfiguration(durableName: consumer, ackPolicy: ConsumerConfiguration.AckPolicy.none)
            if let last {
                configuration.deliverPolicy = .byStartSequence
                configuration.startSequence = last + 1
            }
            _ = try await retried { try await js.createConsumer(stream: "HERALD", configuration) }
            do {
                // A consumer whose fetches come back empty while messages are left (its replica
                // behind, just after a partition healed) is given up after six in a row for a new
                // one; twelve consumers in all, then an error saying what was read (seen once: the
                // split scenario read on for ever after the daemons stopped).
                var empty = 0
                while read < total, empty < 6 {
                    let batch = try await js.fetch(stream: "HERALD", consumer: consumer, batch: 500, expires: .seconds(5))
                    read += UInt64(batch.count)
                    last = batch.last?.metadata.streamSequence ?? last
                    stored += batch.compactMap { StreamedEvent($0.message) }
                    empty = batch.isEmpty ? empty + 1 : 0
                }
                if read < total {
                    guard attempt < 12 else { throw StreamWatcherError(message: "read \(read) of the \(total) messages of HERALD; the last at sequence \(last ?? 0)") }
                    attempt += 1
                }
            } catch let error as NATSError where error.kind == .timeout && attempt < 12 {
                attempt += 1
            } catch let error as JetStreamError where error.code == 503 && attempt < 12 {
                attempt += 1
            }
        }
        return stored
    }

    func close() async {
        await connection.close()
    }
}
