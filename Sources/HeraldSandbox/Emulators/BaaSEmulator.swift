import Foundation

/// Emulates NEC BaaS object buckets under `/1/{tenant}/objects/{bucket}[/{id}]`: query,
/// create, update with etag, delete; the application headers are required. With
/// ``SandboxConfiguration/todoInterval`` the todo bucket grows a todo per interval of `now`,
/// the way the timeline grows: lazily, when a request looks.
final class BaaSEmulator: Sendable {
    struct StoredObject: Sendable {
        var id: String
        var createdAt: Date
        var updatedAt: Date
        var etag: String
        var fields: [(String, SandboxJSON)]
        var generated = false
    }

    struct State: Sendable {
        var buckets: [String: [StoredObject]] = [:]
        var counter: UInt64 = 0
        var generatedTodos = 0

        /// Appends the todos due by `now`: one per `interval` seconds after `start`, each
        /// created on its beat. Capped, like the timeline, so an extreme configuration cannot
        /// exhaust memory.
        mutating func growTodos(in bucket: String, now: Date, start: Date, interval: TimeInterval?) {
            guard let interval, interval > 0 else { return }
            let elapsed = max(0, now.timeIntervalSince(start))
            let target = elapsed.isFinite ? Int(min(100_000, (elapsed / interval).rounded(.down))) : 0
            while generatedTodos < target {
                let created = start.addingTimeInterval(Double(generatedTodos + 1) * interval)
                let object = StoredObject(
                    id: nextToken(), createdAt: created, updatedAt: created, etag: nextToken(),
                    fields: TodoFixtures.fields(at: generatedTodos), generated: true)
                buckets[bucket, default: []].append(object)
                generatedTodos += 1
            }
        }

        mutating func nextToken() -> String {
            counter += 1
            let hex = String(counter, radix: 16)
            return "5a1e" + String(repeating: "0", count: max(0, 20 - hex.count)) + hex
        }
    }

    private let configuration: SandboxConfiguration
    private let start: Date
    private let state = Locked(State())

    init(configuration: SandboxConfiguration) {
        self.configuration = configuration
        self.start = configuration.now()
    }

    /// Grows the todo bucket up to `now`; called under the lock before anything reads or
    /// writes a bucket, so ids and order follow time.
    private func grow(_ state: inout State, now: Date) {
        state.growTodos(in: configuration.todoBucket, now: now, start: start, interval: configuration.todoInterval)
    }

    /// The objects of `bucket` in the order they were stored (the todo bucket grown to `now`),
    /// each with its rendering.
    func objects(in bucket: String) -> [(object: SandboxObject, json: SandboxJSON)] {
        let now = configuration.now()
        let stored = state.withLock { state -> [StoredObject] in
            grow(&state, now: now)
            return state.buckets[bucket] ?? []
        }
        return stored.map {
            let json = render($0)
            return (SandboxObject(id: $0.id, createdAt: $0.createdAt, updatedAt: $0.updatedAt, json: json.serialized(),
                                  isGenerated: $0.generated), json)
        }
    }

    private static func error(_ status: Int, _ message: String) -> SandboxResponse {
        .json(status, .object([("error", .string(message))]))
    }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        // /1/{tenant}/objects/{bucket}[/{id}]
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard segments.count >= 4, segments.count <= 5, segments[0] == "1", segments[2] == "objects" else {
            return Self.error(404, "no such resource")
        }
        guard segments[1] == configuration.baasTenant else { return Self.error(404, "no such tenant") }
        guard request.header("X-Application-Id") == configuration.baasApplicationID,
            request.header("X-Application-Key") == configuration.baasApplicationKey
        else { return Self.error(401, "invalid application id or key") }
        let bucket = segments[3]
        let objectID = segments.count == 5 ? segments[4] : nil
        let now = configuration.now()
        state.withLock { grow(&$0, now: now) }
        switch (request.method, objectID) {
        case ("GET", nil): return query(bucket, request)
        case ("POST", nil): return create(bucket, request)
        case ("GET", let id?): return read(bucket, id)
        case ("PUT", let id?): return update(bucket, id, request)
        case ("DELETE", let id?): return delete(bucket, id, request)
        default: return Self.error(405, "method not allowed")
        }
    }

    private func render(_ object: StoredObject) -> SandboxJSON {
        .object([
            ("_id", .string(object.id)), ("createdAt", .string(Self.formatDate(object.createdAt))),
            ("updatedAt", .string(Self.formatDate(object.updatedAt))), ("etag", .string(object.etag)),
            ("ACL", .object([("owner", .null), ("r", .array([.string("g:anonymous")])), ("w", .array([.string("g:anonymous")]))])),
        ] + object.fields)
    }

    static func formatDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: date)
    }

    private func userFields(_ request: SandboxRequest) -> [(String, SandboxJSON)]? {
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/json") == true,
            case .object(let pairs)? = SandboxJSON.parse(request.body)
        else { return nil }
        return pairs.filter { !["_id", "createdAt", "updatedAt", "etag", "ACL"].contains($0.0) }
    }

    private func create(_ bucket: String, _ request: SandboxRequest) -> SandboxResponse {
        guard let fields = userFields(request) else { return Self.error(400, "body must be a JSON object") }
        let now = configuration.now()
        let object = state.withLock { state -> StoredObject in
            let object = StoredObject(id: state.nextToken(), createdAt: now, updatedAt: now, etag: state.nextToken(), fields: fields)
            state.buckets[bucket, default: []].append(object)
            return object
        }
        return .json(201, render(object))
    }

    private func read(_ bucket: String, _ id: String) -> SandboxResponse {
        guard let object = state.withLock({ $0.buckets[bucket]?.first { $0.id == id } }) else { return Self.error(404, "no such object") }
        return .json(200, render(object))
    }

    private func update(_ bucket: String, _ id: String, _ request: SandboxRequest) -> SandboxResponse {
        guard let fields = userFields(request) else { return Self.error(400, "body must be a JSON object") }
        let now = configuration.now()
        let etag = request.query("etag")
        return state.withLock { state -> SandboxResponse in
            guard let index = state.buckets[bucket]?.firstIndex(where: { $0.id == id }), var object = state.buckets[bucket]?[index] else {
                return Self.error(404, "no such object")
            }
            if let etag, etag != object.etag { return Self.error(409, "etag mismatch") }
            for (key, value) in fields {
                if let existing = object.fields.firstIndex(where: { $0.0 == key }) {
                    object.fields[existing].1 = value
                } else {
                    object.fields.append((key, value))
                }
            }
            object.updatedAt = now
            object.etag = state.nextToken()
            state.buckets[bucket]?[index] = object
            return .json(200, render(object))
        }
    }

    private func delete(_ bucket: String, _ id: String, _ request: SandboxRequest) -> SandboxResponse {
        let etag = request.query("etag")
        return state.withLock { state -> SandboxResponse in
            guard let index = state.buckets[bucket]?.firstIndex(where: { $0.id == id }), let object = state.buckets[bucket]?[index] else {
                return Self.error(404, "no such object")
            }
            if let etag, etag != object.etag { return Self.error(409, "etag mismatch") }
            state.buckets[bucket]?.remove(at: index)
            return SandboxResponse(status: 200)
        }
    }

    private func query(_ bucket: String, _ request: SandboxRequest) -> SandboxResponse {
        var condition: [(String, SandboxJSON)] = []
        if let whereText = request.query("where") {
            guard case .object(let pairs)? = SandboxJSON.parse(Data(whereText.utf8)) else { return Self.error(400, "where must be a JSON object") }
            condition = pairs
        }
        let skip = max(0, request.query("skip").flatMap { Int($0) } ?? 0)
        let limit = request.query("limit").flatMap { Int($0) } ?? 100
        let order = (request.query("order") ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        let objects = state.withLock { $0.buckets[bucket] ?? [] }
        let values = objects.map { (object: $0, json: render($0)) }
        var matching = values.filter { item in condition.allSatisfy { BaaSQueryMatcher.matches(item.json[$0.0], $0.1) } }
        matching.sort { BaaSQueryMatcher.ordered($0.json, $1.json, by: order) }
        let page = matching.dropFirst(skip).prefix(limit < 0 ? Int.max : limit)
        var body: [(String, SandboxJSON)] = [("results", .array(page.map(\.json)))]
        if request.query("count") == "1" { body.append(("count", .int(Int64(matching.count)))) }
        return .json(200, .object(body))
    }
}
