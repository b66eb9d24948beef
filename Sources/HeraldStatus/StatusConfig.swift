import Foundation

/// The configuration a daemon runs and its reloads, as `/status` and `/metrics` report them.
public struct StatusConfig: Sendable, Hashable, Codable {
    /// The configuration file's path, as given to the daemon.
    public var path: String?
    /// The SHA-1 of the file running now, in lowercase hex.
    public var sha1: String?
    /// When the running configuration was read.
    public var loadedAt: Date?
    /// Reloads asked for (signals and `POST /-/reload`) since start, coalesced ones counted once.
    public var reloads: Int
    /// Whether the last reload applied (true before any).
    public var lastReloadSuccessful: Bool
    /// When the configuration was last loaded successfully (at start or by a reload).
    public var lastSuccess: Date?
    /// The last failed reload's problems, one line each (empty after a success).
    public var lastErrors: [String]

    /// What a daemon reports before it read a file: nothing loaded, no reload.
    public init(path: String? = nil, sha1: String? = nil, loadedAt: Date? = nil, reloads: Int = 0, lastReloadSuccessful: Bool = true,
                lastSuccess: Date? = nil, lastErrors: [String] = []) {
        self.path = path
        self.sha1 = sha1
        self.loadedAt = loadedAt
        self.reloads = reloads
        self.lastReloadSuccessful = lastReloadSuccessful
        self.lastSuccess = lastSuccess
        self.lastErrors = lastErrors
    }
}

/// What `POST /-/reload` answers: whether the file was applied, its problems (each with its JSON
/// path) or what changed, and what applies only at the next start.
public struct StatusReloadResult: Sendable, Hashable, Codable {
    /// Whether the new file is running now, every part of it started.
    public var ok: Bool
    /// Whether the file was valid and applied (some parts may have failed to start: ``errors``).
    public var applied: Bool
    /// Problems of the file (nothing was changed) or of applying it.
    public var errors: [String]
    /// What changed, one line each.
    public var changes: [String]
    /// What was not applied, and why.
    public var notes: [String]

    /// A result.
    public init(ok: Bool, applied: Bool, errors: [String] = [], changes: [String] = [], notes: [String] = []) {
        self.ok = ok
        self.applied = applied
        self.errors = errors
        self.changes = changes
        self.notes = notes
    }

    /// As JSON (sorted keys).
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// Reads what ``json()`` wrote.
    public static func decode(_ data: Data) throws -> StatusReloadResult {
        try JSONDecoder().decode(StatusReloadResult.self, from: data)
    }
}
