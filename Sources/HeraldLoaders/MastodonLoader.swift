import Foundation
import Herald
import HeraldServices

/// Reads a Mastodon timeline (home, public, local, a hashtag, a list or an account's statuses)
/// and announces it on the bus.
///
/// Each ``load()`` makes one request and publishes one ``MastodonStatusesLoaded`` or
/// ``LoadFailed``. The loader keeps a cursor (the newest status seen, or the `min_id` of the
/// `Link` header's `prev` page) and asks with `min_id`, so each page holds the statuses
/// immediately newer than the cursor, oldest of them first in time: when more arrived than a
/// page holds, the next load goes on where this one stopped and none is skipped. The ids of the
/// last ``seenLimit`` statuses are kept too, so a page that repeats ids, or a server that ignores
/// `min_id`, announces nothing twice. Cursor and ids survive restarts in the state file.
///
/// A 401 means the token was revoked or is invalid: the loader announces it once as a
/// `LoadFailed` of kind ``LoadError/unauthorizedKind`` and sends no further request (later loads
/// fail the same way at once); its schedule stops.
public actor MastodonLoader: StatefulLoader {
    /// What to ask for.
    public struct Request: Sendable, Hashable {
        /// The timeline.
        public var timeline: MastodonTimeline
        /// Statuses per page, 1…40 (the server's default, 20, when nil).
        public var limit: Int?

        /// Creates a request.
        public init(timeline: MastodonTimeline = .home, limit: Int? = nil) {
            self.timeline = timeline
            self.limit = limit
        }
    }

    /// How many status ids are remembered.
    public static let seenLimit = 1000

    /// The loader's id.
    public nonisolated let id: String
    /// What it asks for.
    public nonisolated let request: Request
    private let client: MastodonClient
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "mastodon"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false
    private var refusal: LoadError?

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: MastodonClient, request: Request = Request(), bus: EventBus,
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
        if let refusal { throw refusal }
        // The cursor is the last id of `seen` (the state's `sinceID` is kept for Twitter's
        // numeric ids; Mastodon-compatible servers' ids need not be numbers).
        let cursor = previous.seen.last
        let page: MastodonTimelinePage
        do {
            page = try await client.timeline(request.timeline, MastodonTimelineQuery(limit: request.limit, minID: cursor))
        } catch let error as ServiceError where error.kind == .httpStatus && error.status == 401 {
            let refused = LoadError(
                kind: LoadError.unauthorizedKind,
                message: "the server refused the access token (\(error.message)); loader \(id) stops until herald is restarted with a valid token",
                status: 401)
            refusal = refused
            throw refused
        }
        var seen = Set(previous.seen)
        var unique: [MastodonStatus] = []
        var onPage = Set<String>()
        for status in page.statuses where onPage.insert(status.id).inserted { unique.append(status) }
        // New: never seen, and newer than the cursor (a server that ignores min_id sends older ones).
        let fresh = unique.filter { !seen.contains($0.id) && MastodonID.isNewer($0.id, than: cursor) }
        var next = previous
        // Oldest first, so the last id is the newest.
        for status in fresh.sorted(by: { MastodonID.isNewer($1.id, than: $0.id) }) where seen.insert(status.id).inserted {
            next.seen.append(status.id)
        }
        // The Link header's `prev` page starts where the next load should: its min_id.
        if let newer = page.previous?.minID ?? page.previous?.sinceID, !newer.isEmpty, newer.utf8.count <= LoaderState.itemIDLimit,
           MastodonID.isNewer(newer, than: next.seen.last) {
            if seen.insert(newer).inserted { next.seen.append(newer) } else {
                next.seen.removeAll { $0 == newer }
                next.seen.append(newer)
            }
        }
        next.seen = Array(next.seen.filter { !$0.isEmpty && $0.utf8.count <= LoaderState.itemIDLimit }.suffix(Self.seenLimit))
        let event = MastodonStatusesLoaded(loader: id, timeline: request.timeline.description, statuses: unique,
                                           newStatuses: fresh, rateLimitRemaining: page.rateLimit?.remaining)
        return Fetched(state: next, event: event, outcome: .finished(items: unique.count, new: fresh.count))
    }
}
