import Foundation
import Synchronization
import HeraldSync

/// Where a log subscriber's lines go.
///
/// An implementation must write each line whole (lines from different threads never
/// interleave) and must not throw: a writer that cannot write drops the line.
public protocol LogWriter: Sendable {
    /// Writes one line; `line` has no trailing newline.
    func write(_ line: String)
}

/// Writes lines to a file handle: standard error, standard output, or a file opened for append.
public final class FileHandleLogWriter: LogWriter {
    private let handle: SyncLock<FileHandle>

    /// Writes to `handle`.
    public init(handle: FileHandle) {
        self.handle = SyncLock(handle)
    }

    /// Writes to standard error.
    public static func standardError() -> FileHandleLogWriter { FileHandleLogWriter(handle: .standardError) }

    /// Writes to standard output.
    public static func standardOutput() -> FileHandleLogWriter { FileHandleLogWriter(handle: .standardOutput) }

    /// Appends to the file at `path`, creating it (mode 0600) and its directory when missing.
    ///
    /// - Throws: when the file cannot be created or opened.
    public static func appending(toFile path: String) throws -> FileHandleLogWriter {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        return FileHandleLogWriter(handle: handle)
    }

    /// Writes one line and a newline in one call.
    public func write(_ line: String) {
        handle.withLock { handle in
            try? handle.write(contentsOf: Data((line + "\n").utf8))
        }
    }
}

/// Keeps lines in memory: for tests, and for programs that show recent log lines.
public final class InMemoryLogWriter: LogWriter {
    private let storage = SyncLock<[String]>([])

    /// Creates an empty writer.
    public init() {}

    /// Records one line.
    public func write(_ line: String) {
        storage.withLock { $0.append(line) }
    }

    /// The lines written so far, oldest first.
    public var lines: [String] { storage.withLock { $0 } }
}
