import Foundation

/// Runs a program of the machine (curl, promtool, chromium) as a ``ChildProcess``; the calling
/// task waits without blocking a thread.
public enum Tool {
    /// The first of `paths` that is an executable file.
    public static func find(_ paths: [String]) -> String? {
        paths.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `path` with `arguments`, `input` (if any) as its standard input, to its end.
    ///
    /// - Throws: when it cannot start, or has not ended after five minutes (a hang guard).
    public static func run(_ path: String, _ arguments: [String], input: Data? = nil) async throws -> Curl.Output {
        guard let finished = try await ChildProcess.run(URL(fileURLWithPath: path), arguments, input: input ?? Data()) else {
            throw ToolError(description: "\(path) \(arguments.joined(separator: " ")) did not end within five minutes")
        }
        return Curl.Output(status: finished.status, stdout: finished.stdout, stderr: finished.stderr)
    }
}

/// A tool that did not end.
public struct ToolError: Error, CustomStringConvertible {
    /// What happened.
    public var description: String
}
