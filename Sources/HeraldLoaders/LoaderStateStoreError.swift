#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a ``LoaderStateStore`` could not write a state file: what it was doing, on which path,
/// and the system's reason in words (`cannot create the directory /var/state: Permission denied`).
public struct LoaderStateStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the store was doing: `create the directory`, `create`, `write`, `rename to`, ….
    public var operation: String
    /// The file or directory concerned.
    public var path: String
    /// Why it failed, in words (the `errno` text when the system refused).
    public var reason: String

    /// Creates an error.
    public init(operation: String, path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    /// An error for a failed system call, from its `errno`.
    init(operation: String, path: String, errno code: Int32) {
        self.init(operation: operation, path: path, reason: Self.text(errno: code))
    }

    /// `cannot <operation> <path>: <reason>`.
    public var description: String { "cannot \(operation) \(path): \(reason)" }

    /// The system's text for `code` (`No such file or directory`).
    static func text(errno code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}
