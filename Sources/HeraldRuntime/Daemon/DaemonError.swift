/// Why the daemon could not start (the CLI exits 1).
public struct DaemonError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, in one line.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
