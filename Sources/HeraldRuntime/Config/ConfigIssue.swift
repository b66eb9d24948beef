/// One problem in a configuration: the JSON path where it is and what is wrong.
public struct ConfigIssue: Sendable, Hashable, CustomStringConvertible {
    /// The JSON path (`loaders.home.every`); empty for the document itself.
    public var path: String
    /// What is wrong (`"30x" is not a duration`).
    public var message: String

    /// Creates an issue.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `loaders.home.every: "30x" is not a duration`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A configuration that failed validation, with every problem found (not only the first).
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems, in document order (keys sorted).
    public var issues: [ConfigIssue]

    /// Creates the error.
    public init(issues: [ConfigIssue]) {
        self.issues = issues
    }

    /// One issue per line.
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}
