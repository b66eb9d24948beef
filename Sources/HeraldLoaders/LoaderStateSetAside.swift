import Herald

/// `loader.<id>.state.corrupt`: the loader's state file could not be read, or held a state that
/// cannot be trusted (an unknown version, a marker that is not a status id); it was renamed
/// aside, never used, and the loader starts afresh (it may announce old items once more).
public struct LoaderStateSetAside: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// The file that could not be read.
    public var path: String
    /// Where it was moved, when the rename succeeded.
    public var movedTo: String?
    /// What is wrong with it (`it is a directory`, `not JSON: …`, `unsupported version 99 …`).
    public var reason: String

    /// Creates the event.
    public init(loader: String, path: String, movedTo: String?, reason: String) {
        self.loader = loader
        self.path = path
        self.movedTo = movedTo
        self.reason = reason
    }

    /// `loader.<id>.state.corrupt`.
    public var topic: Topic {
        (try? Topic(tokens: "loader", loader, "state", "corrupt")) ?? "loader.invalid.state.corrupt"
    }
}
