import Foundation
import Herald
import HeraldServices

/// Reads an RSS 2.0, RSS 1.0 or Atom 1.0 feed and announces the items not seen before.
///
/// Each ``load()`` makes one conditional GET (see ``FeedClient``) and publishes one
/// ``FeedItemsLoaded`` or ``LoadFailed``. The ids of the last ``seenLimit`` items (by default) and the
/// feed's `ETag` / `Last-Modified` are kept in the state file, so a restart announces nothing
/// twice and the server can answer 304 (a finished load with nothing new). Every id of the
/// current document is kept as most recently seen, so an item still in the feed is never
/// forgotten and announced again; ids that left the feed are forgotten oldest first.
///
/// A 429, or a 503 with `Retry-After`, fails as rate limited with the time to come back, which
/// the schedule honours; other failures back off as usual.
public actor FeedLoader: StatefulLoader {
    /// The most item ids remembered, unless the loader is made with another limit.
    public static let seenLimit = 5_000

    /// The loader's id.
    public nonisolated let id: String
    /// The feed's URL.
    public nonisolated let url: URL
    private let client: FeedClient
    /// The most item ids this loader remembers.
    private let limit: Int
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "feed"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false

    /// Creates a loader that remembers the ids of the last `seenLimit` items (at least 1; a feed
    /// holding more items than that announces its oldest ones again).
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, url: URL, client: FeedClient, bus: EventBus, stateStore: any LoaderStateStorage = .none,
                seenLimit: Int = FeedLoader.seenLimit) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.url = url
        self.client = client
        self.limit = max(1, seenLimit)
        self.bus = bus
        self.store = stateStore
    }

    /// Loads once, or joins the load in progress.
    public func load() async -> LoadOutcome { await loadOnce() }

    func fetch(previous: LoaderState) async throws -> Fetched {
        let fetched = try await client.fetch(url, validators: FeedValidators(etag: previous.etag, lastModified: previous.lastModified))
        var next = previous
        next.etag = fetched.validators.etag
        next.lastModified = fetched.validators.lastModified
        guard let document = fetched.document else {
            let event = FeedItemsLoaded(loader: id, url: url.absoluteString, notModified: true, movedTo: fetched.movedTo?.absoluteString)
            return Fetched(state: next, event: event, outcome: .finished(items: 0, new: 0))
        }
        let seen = Set(previous.seen)
        let fresh = document.items.filter { !seen.contains($0.id) }
        // The document's ids become the most recent, oldest of them (the last, in a feed) first.
        let current = document.items.map(\.id)
        let currentSet = Set(current)
        next.seen = Array((previous.seen.filter { !currentSet.contains($0) } + current.reversed()).suffix(limit))
        let event = FeedItemsLoaded(loader: id, url: url.absoluteString, format: document.format.rawValue, title: document.title,
                                    itemCount: document.items.count, newItems: fresh, movedTo: fetched.movedTo?.absoluteString,
                                    duplicateItems: document.duplicateItems, itemsWithoutID: document.itemsWithoutID)
        return Fetched(state: next, event: event, outcome: .finished(items: document.items.count, new: fresh.count))
    }
}
