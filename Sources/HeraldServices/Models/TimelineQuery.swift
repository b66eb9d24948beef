/// The parameters of a timeline read.
public struct TimelineQuery: Sendable, Hashable {
    /// How many statuses, 1…200 (the service's default is 20).
    public var count: Int?
    /// Only statuses newer than this id.
    public var sinceID: String?
    /// Only statuses with at most this id.
    public var maxID: String?
    /// Whether to send only user ids.
    public var trimUser: Bool?
    /// Whether to leave out replies.
    public var excludeReplies: Bool?
    /// Whether to include retweets.
    public var includeRetweets: Bool?

    /// Creates a query.
    public init(count: Int? = nil, sinceID: String? = nil, maxID: String? = nil, trimUser: Bool? = nil,
                excludeReplies: Bool? = nil, includeRetweets: Bool? = nil) {
        self.count = count
        self.sinceID = sinceID
        self.maxID = maxID
        self.trimUser = trimUser
        self.excludeReplies = excludeReplies
        self.includeRetweets = includeRetweets
    }

    /// The query parameters, in a stable order.
    var parameters: [(String, String)] {
        var pairs: [(String, String)] = []
        if let count { pairs.append(("count", String(min(200, max(1, count))))) }
        if let sinceID { pairs.append(("since_id", sinceID)) }
        if let maxID { pairs.append(("max_id", maxID)) }
        if let trimUser { pairs.append(("trim_user", trimUser ? "true" : "false")) }
        if let excludeReplies { pairs.append(("exclude_replies", excludeReplies ? "true" : "false")) }
        if let includeRetweets { pairs.append(("include_rts", includeRetweets ? "true" : "false")) }
        return pairs
    }
}
