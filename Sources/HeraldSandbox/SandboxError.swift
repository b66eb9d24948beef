import HeraldHTTP

/// Why the sandbox could not start.
public struct SandboxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed.
    public var operation: String
    /// The `errno` it set.
    public var code: Int32

    /// `bind to 127.0.0.1:8080 failed: Address already in use (errno 98)`.
    public var description: String {
        HTTPServerError(operation: operation, code: code).description
    }
}
