import Herald

/// `loader.<id>.failed`: a load did not succeed. Carries the typed error, never a secret.
public struct LoadFailed: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// The loader's kind: `timeline`, `tiqav` or `todo`.
    public var kind: String
    /// What went wrong.
    public var error: LoadError

    /// Creates the event.
    public init(loader: String, kind: String, error: LoadError) {
        self.loader = loader
        self.kind = kind
        self.error = error
    }

    /// `loader.<id>.failed`.
    public var topic: Topic { LoaderTopics.topic(loader, "failed") }
}
