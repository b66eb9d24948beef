import Foundation
import Herald
import HeraldServices

/// Pulls Tiqav images (random, or a search) and announces them on the bus.
///
/// Each ``load()`` makes one request and publishes one ``TiqavLoaded`` or ``LoadFailed``.
/// New images are those whose ids were never seen (the last ``seenLimit`` ids are kept in the
/// state file). Concurrent calls join the load in progress.
public actor TiqavLoader: Loader {
    /// What to ask for.
    public enum Request: Sendable, Hashable {
        /// `search/random.json`.
        case random
        /// `search.json?q=` (no match is an empty, successful load).
        case search(String)
    }

    /// How many seen ids are remembered.
    public static let seenLimit = 1000

    /// The loader's id.
    public nonisolated let id: String
    /// What it asks for.
    public nonisolated let request: Request
    private let client: TiqavClient
    private let bus: EventBus
    private let store: LoaderStateStore
    private var state: LoaderState?
    private var running: Task<LoadOutcome, Never>?
    private var writeFailureReported = false

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: TiqavClient, request: Request = .random, bus: EventBus,
                stateStore: LoaderStateStore = .none) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.client = client
        self.request = request
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
            let images = switch request {
            case .random: try await client.random()
            case .search(let query): try await client.search(query)
            }
            var seen = Set(previous.seen)
            var fresh: [TiqavImage] = []
            var next = previous
            for image in images where seen.insert(image.id).inserted {
                fresh.append(image)
                next.seen.append(image.id)
            }
            next.seen = Array(next.seen.suffix(Self.seenLimit))
            await save(next)
            let event = TiqavLoaded(loader: id, images: images, newImages: fresh,
                                    imageURLs: images.map { client.imageURL(for: $0).absoluteString })
            await LoaderSupport.announce(event, on: bus, from: sender)
            return .finished(items: images.count, new: fresh.count)
        } catch {
            let failure = LoadError(error)
            await LoaderSupport.announce(LoadFailed(loader: id, kind: "tiqav", error: failure), on: bus, from: sender)
            return .failed(failure)
        }
    }
}
