import Foundation
import Herald
import HeraldServices

/// Reads a BaaS bucket of todos, sorted by `updatedAt`, and announces it on the bus.
///
/// Each ``load()`` makes one query and publishes one ``TodosLoaded`` or ``LoadFailed``. New
/// todos are those whose ids were not in the bucket at the previous load (kept in the state
/// file); removed ones are reported by id. Concurrent calls join the load in progress.
public actor TodoLoader: Loader {
    /// The loader's id.
    public nonisolated let id: String
    /// The bucket it reads.
    public nonisolated let bucket: String
    private let client: BaaSClient
    private let bus: EventBus
    private let store: LoaderStateStore
    private var state: LoaderState?
    private var running: Task<LoadOutcome, Never>?
    private var writeFailureReported = false

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: BaaSClient, bucket: String, bus: EventBus,
                stateStore: LoaderStateStore = .none) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.client = client
        self.bucket = bucket
        self.bus = bus
        self.store = stateStore
    }

    /// Loads once, or joins the load in progress.
    public func load() async -> LoadOutcome {
        let task: Task<LoadOutcome, Never>
        if let running {
            task = running
        } else {
            task = Task { await self.performLoad() }
            running = task
        }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    private func save(_ next: LoaderState) async {
        state = next
        guard let event = LoaderSupport.write(next, id: id, to: store), !writeFailureReported else { return }
        writeFailureReported = true
        await LoaderSupport.announce(event, on: bus, from: sender)
    }

    private func performLoad() async -> LoadOutcome {
        defer { running = nil }
        let previous: LoaderState
        if let state {
            previous = state
        } else {
            previous = await LoaderSupport.readState(id: id, store: store, bus: bus, sender: sender)
            state = previous
        }
        do {
            let result = try await client.query(bucket: bucket, BaaSQuery(order: ["updatedAt"]))
            let todos = Self.sortedByUpdate(result.results)
            let before = Set(previous.seen)
            let now = Set(todos.map(\.id))
            let fresh = todos.filter { !before.contains($0.id) }
            let removed = previous.seen.filter { !now.contains($0) }
            let next = LoaderState(seen: todos.map(\.id))
            await save(next)
            let event = TodosLoaded(loader: id, bucket: bucket, todos: todos, newTodos: fresh, removedIDs: removed)
            await LoaderSupport.announce(event, on: bus, from: sender)
            return .finished(items: todos.count, new: fresh.count)
        } catch {
            let failure = LoadError(error)
            await LoaderSupport.announce(LoadFailed(loader: id, kind: "todo", error: failure), on: bus, from: sender)
            return .failed(failure)
        }
    }

    /// Oldest `updatedAt` first; objects without one first; ties keep the service's order.
    public static func sortedByUpdate(_ objects: [BaaSObject]) -> [BaaSObject] {
        objects.enumerated().sorted { lhs, rhs in
            let a = lhs.element.updatedAt ?? .distantPast, b = rhs.element.updatedAt ?? .distantPast
            return a != b ? a < b : lhs.offset < rhs.offset
        }.map(\.element)
    }
}
