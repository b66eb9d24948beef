import Foundation
import Herald
import HeraldServices

/// Pulls Tiqav images (random, or a search) and announces them on the bus.
///
/// Each ``load()`` makes one request and publishes one ``TiqavLoaded`` or ``LoadFailed``.
/// New images are those whose ids were never seen (the last ``seenLimit`` ids are kept in the
/// state file). Concurrent calls join the load in progress.
public actor TiqavLoader: StatefulLoader {
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
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "tiqav"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: TiqavClient, request: Request = .random, bus: EventBus,
                stateStore: any LoaderStateStorage = .none) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.client = client
        self.request = request
        self.bus = bus
        self.store = stateStore
    }

    /// Loads once, or joins the load in progress.
    public func load() async -> LoadOutcome { await loadOnce() }

    func fetch(previous: LoaderState) async throws -> Fetched {
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
        let event = TiqavLoaded(loader: id, images: images, newImages: fresh,
                                imageURLs: images.map { client.imageURL(for: $0).absoluteString })
        return Fetched(state: next, event: event, outcome: .finished(items: images.count, new: fresh.count))
    }
}
