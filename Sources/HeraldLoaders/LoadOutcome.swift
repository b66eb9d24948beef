/// What one ``Loader/load()`` ended with, for the caller (a schedule) to decide what comes next.
/// The same information has been published on the bus as one event.
public enum LoadOutcome: Sendable, Hashable {
    /// The load succeeded: how many items came, and how many were new.
    case finished(items: Int, new: Int)
    /// The load failed.
    case failed(LoadError)

    /// Whether the load succeeded.
    public var succeeded: Bool {
        if case .finished = self { return true }
        return false
    }
}
