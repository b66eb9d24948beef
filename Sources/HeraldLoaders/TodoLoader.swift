import Foundation
import Herald
import HeraldServices

/// Reads a BaaS bucket of todos, sorted by `updatedAt`, and announces it on the bus.
///
/// Each ``load()`` makes one query and publishes one ``TodosLoaded`` or ``LoadFailed``. New
/// todos are those whose ids were not in the bucket at the previous load (kept in the state
/// file); removed ones are reported by id. Concurrent calls join the load in progress.
public actor TodoLoader: StatefulLoader {
    /// The loader's id.
    public nonisolated let id: String
    /// The bucket it reads.
    public nonisolated let bucket: String
    private let client: BaaSClient
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "todo"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: BaaSClient, bucket: String, bus: EventBus,
                stateStore: any LoaderStateStorage = .none) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.client = client
        self.bucket = bucket
        self.bus = bus
        self.store = stateStore
    }

    /// Loads once, or joins the load in progress.
    public func load() async -> LoadOutcome { await loadOnce() }

    func fetch(previous: LoaderState) async throws -> Fetched {
        let result = try await client.query(bucket: bucket, BaaSQuery(order: ["updatedAt"]))
        let todos = Self.sortedByUpdate(result.results)
        let before = Set(previous.seen)
        let now = Set(todos.map(\.id))
        let fresh = todos.filter { !before.contains($0.id) }
        let removed = previous.seen.filter { !now.contains($0) }
        let event = TodosLoaded(loader: id, bucket: bucket, todos: todos, newTodos: fresh, removedIDs: removed)
        return Fetched(state: LoaderState(seen: todos.map(\.id)), event: event,
                       outcome: .finished(items: todos.count, new: fresh.count))
    }

    /// Oldest `updatedAt` first; objects without one first; ties keep the service's order.
    public static func sortedByUpdate(_ objects: [BaaSObject]) -> [BaaSObject] {
        objects.enumerated().sorted { lhs, rhs in
            let a = lhs.element.updatedAt ?? .distantPast, b = rhs.element.updatedAt ?? .distantPast
            return a != b ? a < b : lhs.offset < rhs.offset
        }.map(\.element)
    }
}
