#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the sandbox could not start.
public struct SandboxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed.
    public var operation: String
    /// The `errno` it set.
    public var code: Int32

    static func socket(_ operation: String, _ code: Int32) -> SandboxError {
        SandboxError(operation: operation, code: code)
    }

    /// `bind to 127.0.0.1:8080 failed: Address already in use (errno 98)`.
    public var description: String {
        "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
