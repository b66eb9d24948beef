/// The answer to a bucket query: the objects and, when asked, the total count.
public struct BaaSQueryResult: Sendable, Hashable, Codable {
    /// The matching objects in the requested order.
    public var results: [BaaSObject]
    /// The number of matching objects ignoring skip / limit, when `count=1` was sent.
    public var count: Int?

    /// Creates a result.
    public init(results: [BaaSObject], count: Int? = nil) {
        self.results = results
        self.count = count
    }
}
