import Foundation
import Herald
import HeraldServices

/// Reads an X API v2 timeline (the home timeline, a user's posts, or a recent search) and
/// announces it on the bus exactly as ``TimelineLoader`` does: one ``TimelineLoaded`` (statuses
/// with their authors from `includes.users`) or one ``LoadFailed`` per ``load()``, so log lines,
/// archives, the status page and post rules (`{{text}}`, `for: new`) work unchanged.
///
/// The user id the home timeline needs comes from `GET /2/users/me` once (a user's timeline:
/// `GET /2/users/by/username/:username` once). New posts are those newer than the stored
/// `since_id` marker; with a marker, the pages after the first (`pagination_token`) are read
/// too, up to ``Request/maxPages``, so a burst larger than a page is not lost. A page that is
/// empty or repeats ids ends the paging. A 401 (a revoked token, wrong keys) is announced once
/// and stops the loader: later loads make no request and publish nothing until Herald restarts.
public actor XTimelineLoader: StatefulLoader {
    /// Which timeline to read.
    public enum Timeline: Sendable, Hashable {
        /// The signed-in user's reverse-chronological home timeline.
        case home
        /// A user's posts, by handle.
        case user(username: String)
        /// Posts of the last seven days matching a query.
        case search(query: String)
    }

    /// What to ask for.
    public struct Request: Sendable, Hashable {
        /// The timeline.
        public var timeline: Timeline
        /// Posts per page (`max_results`; the service's default when nil).
        public var maxResults: Int?
        /// Pages read in one load at most, once there is a marker.
        public var maxPages: Int

        /// Creates a request.
        public init(timeline: Timeline = .home, maxResults: Int? = nil, maxPages: Int = 5) {
            self.timeline = timeline
            self.maxResults = maxResults
            self.maxPages = max(1, maxPages)
        }
    }

    /// The loader's id.
    public nonisolated let id: String
    /// What it asks for.
    public nonisolated let request: Request
    private let client: XClient
    private let now: @Sendable () -> Date
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "timeline"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false
    private var userID: String?
    /// Set by a 401: the loader has stopped.
    private var refused: LoadError?
    /// Rate-limit refusals in a row whose reset was already past.
    private var pastResets = 0

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: XClient, request: Request = Request(), bus: EventBus,
                stateStore: any LoaderStateStorage = .none, now: @escaping @Sendable () -> Date = { Date() }) throws(LoaderSetupError) {
        try LoaderTopics.validate(id: id)
        self.id = id
        self.client = client
        self.request = request
        self.bus = bus
        self.store = stateStore
        self.now = now
    }

    /// Loads once, or joins the load in progress. After a 401 it returns that failure again
    /// without a request and without an event.
    public func load() async -> LoadOutcome {
        if let refused { return .failed(refused) }
        return await loadOnce()
    }

    /// Whether a 401 has stopped the loader.
    public var isStopped: Bool { refused != nil }

    func fetch(previous: LoaderState) async throws -> Fetched {
        do {
            let fetched = try await read(previous: previous)
            pastResets = 0
            return fetched
        } catch let error as ServiceError where error.kind == .rateLimited && (error.rateLimit?.reset).map({ $0 <= now() }) ?? true {
            // A reset in the past (clocks apart) or none: wait a minute, doubling while it
            // repeats (15 minutes at most), so the schedule does not ask again every second.
            pastResets += 1
            var failure = LoadError(error)
            let wait = min(900, 60 * pow(2, Double(min(pastResets - 1, 10))))
            failure.retryAt = now().addingTimeInterval(wait)
            throw failure
        } catch let error as ServiceError where error.kind == .httpStatus && error.status == 401 {
            var failure = LoadError(error)
            failure.message = "the service refused the credentials (401); the token may be revoked. "
                + "This loader makes no more requests until Herald restarts with working credentials"
            refused = failure
            throw failure
        }
    }

    private func read(previous: LoaderState) async throws -> Fetched {
        var posts: [Status] = []
        var seen = Set<String>()
        var token: String?
        var rateLimit: RateLimit?
        // Without a marker only the newest page: everything on it is new, and older pages are history.
        let pages = previous.sinceID == nil ? 1 : request.maxPages
        for _ in 0..<pages {
            let query = XTimelineQuery(maxResults: request.maxResults, sinceID: previous.sinceID, paginationToken: token)
            let page = try await readPage(query)
            rateLimit = page.rateLimit ?? rateLimit
            let statuses = page.statuses(fallbackDate: now()).filter { seen.insert($0.id).inserted }
            posts += statuses
            // An empty page, one that only repeats ids, or the last one ends the paging.
            guard !statuses.isEmpty, let next = page.nextToken, next != token else { break }
            token = next
        }
        let fresh = posts.filter { LoaderSupport.isNewer($0.id, than: previous.sinceID) }
        var next = previous
        next.sinceID = LoaderSupport.newest(posts.map(\.id).filter(LoaderState.isStatusID), marker: previous.sinceID)
        let event = TimelineLoaded(loader: id, statuses: posts, newStatuses: fresh, rateLimitRemaining: rateLimit?.remaining)
        return Fetched(state: next, event: event, outcome: .finished(items: posts.count, new: fresh.count))
    }

    private func readPage(_ query: XTimelineQuery) async throws -> XTimelinePage {
        switch request.timeline {
        case .home:
            return try await client.homeTimeline(userID: try await resolvedUserID(), query)
        case .user:
            return try await client.userPosts(userID: try await resolvedUserID(), query)
        case .search(let text):
            return try await client.searchRecent(text, query)
        }
    }

    /// The id the timeline reads, asked once.
    private func resolvedUserID() async throws -> String {
        if let userID { return userID }
        let found = switch request.timeline {
        case .user(let username): try await client.user(username: username).id
        default: try await client.me().id
        }
        userID = found
        return found
    }
}
