import Herald
import HeraldServices

/// `loader.<id>.finished` from a ``MastodonLoader``: the page read and the statuses not seen
/// before, in the shape of ``TimelineLoaded`` (`statuses`, `newStatuses`, `rateLimitRemaining`),
/// so log, archive, status page and post rules (`for: new`) treat it the same way.
public struct MastodonStatusesLoaded: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// Which timeline was read: `home`, `public`, `local`, `hashtag #…`, `list …`, `account …`.
    public var timeline: String
    /// Every status of the page, newest first, each id once.
    public var statuses: [MastodonStatus]
    /// The statuses not seen before and newer than the loader's cursor (all on a first load).
    public var newStatuses: [MastodonStatus]
    /// Requests left in the rate-limit window, when the server said.
    public var rateLimitRemaining: Int?

    /// Creates the event.
    public init(loader: String, timeline: String, statuses: [MastodonStatus], newStatuses: [MastodonStatus],
                rateLimitRemaining: Int? = nil) {
        self.loader = loader
        self.timeline = timeline
        self.statuses = statuses
        self.newStatuses = newStatuses
        self.rateLimitRemaining = rateLimitRemaining
    }

    /// `loader.<id>.finished`.
    public var topic: Topic { LoaderTopics.topic(loader, "finished") }
}
