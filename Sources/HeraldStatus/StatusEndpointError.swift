/// Why the status endpoint could not run.
public struct StatusEndpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, and where.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
