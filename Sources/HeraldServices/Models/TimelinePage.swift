/// One read of a timeline: the statuses, newest first, and the rate-limit state reported.
public struct TimelinePage: Sendable, Hashable {
    /// The statuses in the order the service sent them (newest first).
    public var statuses: [Status]
    /// The `x-rate-limit-*` state, when the service sent it.
    public var rateLimit: RateLimit?

    /// Creates a page.
    public init(statuses: [Status], rateLimit: RateLimit? = nil) {
        self.statuses = statuses
        self.rateLimit = rateLimit
    }

    /// The largest id on the page, to pass as `since_id` next time.
    public var newestID: String? {
        statuses.map(\.id).max { ($0.count, $0) < ($1.count, $1) }
    }
}
