#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an ``HTTPServer`` (or a stream notifier) could not be made: the system call that failed
/// and the `errno` it set, or an address that is not one the server can listen on.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed (`bind to 127.0.0.1:8420`), or the address refused.
    public var operation: String
    /// The `errno` it set; 0 for an address refused before any call.
    public var code: Int32

    /// An error of `operation` with `errno` `code`.
    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    static func socket(_ operation: String, _ code: Int32) -> HTTPServerError {
        HTTPServerError(operation: operation, code: code)
    }

    /// `bind to 127.0.0.1:8080 failed: Address already in use (errno 98)`.
    public var description: String {
        guard code != 0 else { return operation }
        return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
