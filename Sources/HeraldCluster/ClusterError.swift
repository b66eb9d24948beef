/// What a cluster operation failed with: the key-value bucket's refusals the leases and states
/// act on, and the broker being unreachable or answering with an error.
///
/// A struct over a private code, so cases can be added; compare with the static values or
/// the `is…` properties. ``message`` says what was asked and the server's answer.
public struct ClusterError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case keyExists
        case wrongRevision
        case unavailable
        case refused
        case invalidResponse
        case permanent
        case cancelled
    }

    private let code: Code
    /// What failed, with the server's words when it answered.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A create-if-absent found the key present.
    public static func keyExists(_ key: String) -> ClusterError { ClusterError(.keyExists, "key \(key) exists") }
    /// An update's expected revision is not the key's last one (someone else wrote it, or it expired).
    public static func wrongRevision(_ key: String, expected: UInt64) -> ClusterError {
        ClusterError(.wrongRevision, "key \(key) is no longer at revision \(expected)")
    }
    /// No server answered in time, or the connection is down.
    public static func unavailable(_ message: String) -> ClusterError { ClusterError(.unavailable, message) }
    /// A server answered with an error (`-ERR`, a JetStream API error).
    public static func refused(_ message: String) -> ClusterError { ClusterError(.refused, message) }
    /// An answer that is not what the protocol says.
    public static func invalidResponse(_ message: String) -> ClusterError { ClusterError(.invalidResponse, message) }
    /// A message the server will never take as it is (larger than its limit).
    public static func permanent(_ message: String) -> ClusterError { ClusterError(.permanent, message) }
    /// The waiting task was cancelled.
    public static let cancelled = ClusterError(.cancelled, "cancelled")

    /// Whether a create found the key present.
    public var isKeyExists: Bool { code == .keyExists }
    /// Whether an update's expected revision was not the last.
    public var isWrongRevision: Bool { code == .wrongRevision }
    /// Whether the broker could not be reached (worth retrying).
    public var isUnavailable: Bool { code == .unavailable }
    /// Whether retrying cannot help.
    public var isPermanent: Bool { code == .permanent }
    /// Whether the task was cancelled.
    public var isCancelled: Bool { code == .cancelled }

    /// The message.
    public var description: String { message }
}
