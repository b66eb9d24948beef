#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call's `errno` with its text, or a failure of a library under the socket
/// (TLS) in words: what the I/O layer reports when a read, a write or a connect fails.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno`; 0 for a failure that has none (a TLS verification error).
    public let code: Int32
    /// What failed (`bind to 127.0.0.1:8420`), empty when the context says it.
    public let operation: String
    /// Readable text: `Connection refused (errno 111)`, `bind to 127.0.0.1:80 failed: ...`,
    /// or the library's words.
    public let description: String

    /// The error `errno` `code` means, for `operation` if given.
    public init(operation: String = "", errno code: Int32) {
        self.code = code
        self.operation = operation
        self.description = operation.isEmpty ? Self.text(code) : "\(operation) failed: \(Self.text(code))"
    }

    /// A failure without an `errno`, described by `description`.
    public init(_ description: String) {
        self.code = 0
        self.operation = ""
        self.description = description
    }

    /// `strerror` with the number, e.g. `Connection refused (errno 111)`: the one errno text
    /// of every Herald module.
    public static func text(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    /// The calling thread's current `errno`.
    public static var current: SystemError { SystemError(errno: errno) }
}
