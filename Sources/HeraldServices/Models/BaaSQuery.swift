/// The parameters of a bucket query.
public struct BaaSQuery: Sendable, Hashable {
    /// The `where` condition, e.g. `["done": .bool(false)]`; nil matches everything.
    public var conditions: [String: JSONValue]?
    /// Sort keys, `-` prefix for descending; the tutorial's default is `updatedAt` ascending.
    public var order: [String]
    /// Objects to skip.
    public var skip: Int?
    /// Most objects to return; -1 means no limit.
    public var limit: Int?
    /// Whether to ask for the total count.
    public var includeCount: Bool

    /// Creates a query; by default everything, oldest update first.
    public init(conditions: [String: JSONValue]? = nil, order: [String] = ["updatedAt"], skip: Int? = nil,
                limit: Int? = -1, includeCount: Bool = false) {
        self.conditions = conditions
        self.order = order
        self.skip = skip
        self.limit = limit
        self.includeCount = includeCount
    }
}
