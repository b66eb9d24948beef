/// What a loader remembers between loads and across restarts.
public struct LoaderState: Sendable, Hashable, Codable {
    /// The file format's version.
    public var version: Int
    /// The newest status id seen (timelines).
    public var sinceID: String?
    /// The item ids seen (Tiqav images, todos), oldest first.
    public var seen: [String]

    /// Creates a state.
    public init(sinceID: String? = nil, seen: [String] = []) {
        self.version = 1
        self.sinceID = sinceID
        self.seen = seen
    }
}
