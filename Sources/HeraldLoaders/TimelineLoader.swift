import Herald
import HeraldServices

/// Reads a timeline (home or a user's, JSON or XML) and announces it on the bus.
///
/// Each ``load()`` makes one request and publishes one ``TimelineLoaded`` or ``LoadFailed``.
/// New statuses are those newer than the stored `since_id` marker (the newest id seen so far),
/// which survives restarts through the ``LoaderStateStore`` and is sent as `since_id`, so a
/// page holds only what is newer (all of the newest page on a first load). Concurrent calls join the load in
/// progress. Cancelling the caller cancels the request (joiners then see it fail as `cancelled`).
public actor TimelineLoader: StatefulLoader {
    /// Which timeline to read.
    public enum Timeline: Sendable, Hashable {
        /// The signed-in user's home timeline.
        case home
        /// A user's timeline by screen name.
        case user(screenName: String)
    }

    /// What to ask for.
    public struct Request: Sendable, Hashable {
        /// The timeline.
        public var timeline: Timeline
        /// Statuses per page (the service's default when nil).
        public var count: Int?
        /// JSON or XML.
        public var format: TimelineFormat

        /// Creates a request.
        public init(timeline: Timeline = .home, count: Int? = nil, format: TimelineFormat = .json) {
            self.timeline = timeline
            self.count = count
            self.format = format
        }
    }

    /// The loader's id.
    public nonisolated let id: String
    /// What it asks for.
    public nonisolated let request: Request
    private let client: TwitterClient
    let bus: EventBus
    let store: any LoaderStateStorage
    nonisolated let kind = "timeline"
    var state: LoaderState?
    var running: Task<LoadOutcome, Never>?
    var writeFailureReported = false

    /// Creates a loader.
    ///
    /// - Throws: ``LoaderSetupError/invalidID(_:)`` when `id` cannot be a topic token.
    public init(id: String, client: TwitterClient, request: Request = Request(), bus: EventBus,
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
        // Only what is newer than the marker comes back. A marker older than anything the
        // service still holds is no harm: it answers with its newest page, all of it new.
        let query = TimelineQuery(count: request.count, sinceID: previous.sinceID)
        let page = switch request.timeline {
        case .home: try await client.homeTimeline(query, format: request.format)
        case .user(let screenName): try await client.userTimeline(screenName: screenName, query, format: request.format)
        }
        // Filtered still: a service that ignores `since_id` sends old statuses too.
        let fresh = page.statuses.filter { LoaderSupport.isNewer($0.id, than: previous.sinceID) }
        var next = previous
        // Only a real status id becomes the marker, so the state file stays valid.
        next.sinceID = LoaderSupport.newest(page.statuses.map(\.id).filter(LoaderState.isStatusID), marker: previous.sinceID)
        let event = TimelineLoaded(loader: id, statuses: page.statuses, newStatuses: fresh,
                                   rateLimitRemaining: page.rateLimit?.remaining)
        return Fetched(state: next, event: event, outcome: .finished(items: page.statuses.count, new: fresh.count))
    }
}
