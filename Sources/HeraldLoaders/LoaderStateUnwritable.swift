import Herald

/// `loader.<id>.state.unwritable`: the loader's state could not be saved. Loads go on, with the
/// state kept in memory; after a restart old items may be announced again. Published once per
/// loader, at the first failure.
public struct LoaderStateUnwritable: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// The directory it writes to.
    public var directory: String
    /// Why the write failed.
    public var reason: String

    /// Creates the event.
    public init(loader: String, directory: String, reason: String) {
        self.loader = loader
        self.directory = directory
        self.reason = reason
    }

    /// `loader.<id>.state.unwritable`.
    public var topic: Topic {
        (try? Topic(tokens: "loader", loader, "state", "unwritable")) ?? "loader.invalid.state.unwritable"
    }
}
