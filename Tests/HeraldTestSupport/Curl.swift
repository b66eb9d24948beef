import Foundation

/// Shared by the test targets (a helper, not a test target itself).
///
/// Runs the machine's `curl` as a child process: a real client that shares no code with Herald.
public enum Curl {
    public static let path = "/usr/bin/curl"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(_ arguments: [String]) async throws -> Output {
        try await Tool.run(path, ["--silent", "--show-error", "--max-time", "300"] + arguments)
    }
}
