import Herald
import HeraldServices

/// `loader.<id>.finished` from a ``TimelineLoader``: the page read and the statuses that are
/// newer than anything the loader had seen before.
public struct TimelineLoaded: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// Every status of the page, newest first.
    public var statuses: [Status]
    /// The statuses newer than the previous load's newest (all of them on a first load).
    public var newStatuses: [Status]
    /// Requests left in the rate-limit window, when the service said.
    public var rateLimitRemaining: Int?

    /// Creates the event.
    public init(loader: String, statuses: [Status], newStatuses: [Status], rateLimitRemaining: Int? = nil) {
        self.loader = loader
        self.statuses = statuses
        self.newStatuses = newStatuses
        self.rateLimitRemaining = rateLimitRemaining
    }

    /// `loader.<id>.finished`.
    public var topic: Topic { LoaderTopics.topic(loader, "finished") }
}
