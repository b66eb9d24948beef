import Herald

/// Published on `herald.config.reloaded` when a reload applied a configuration file, and on
/// `herald.config.reload.failed` when it did not (the file is invalid: nothing changed).
public struct ConfigReloaded: Event, Hashable {
    /// `herald.config.reloaded`.
    public static let appliedTopic: Topic = "herald.config.reloaded"
    /// `herald.config.reload.failed`.
    public static let failedTopic: Topic = "herald.config.reload.failed"
    /// ``appliedTopic`` or ``failedTopic``.
    public var topic: Topic { applied ? Self.appliedTopic : Self.failedTopic }

    /// Whether the file now runs.
    public var applied: Bool
    /// The file's path.
    public var path: String
    /// The file's SHA-1 (nil when it could not be read).
    public var sha1: String?
    /// What changed, one line each (``ConfigDifference/lines``).
    public var changes: [String]
    /// Problems: the file's, each with its JSON path, or those met applying it.
    public var errors: [String]
    /// What was not applied, and why.
    public var notes: [String]

    /// A report.
    public init(applied: Bool, path: String, sha1: String?, changes: [String], errors: [String], notes: [String]) {
        self.applied = applied
        self.path = path
        self.sha1 = sha1
        self.changes = changes
        self.errors = errors
        self.notes = notes
    }
}
