import Foundation
import HeraldIO
import HeraldSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a log subscriber's lines go.
///
/// An implementation must write each line whole and in the order given (lines of different
/// calls never interleave). It must not throw: a writer that cannot write drops the lines. The
/// log subscriber calls it from its mailbox's task, one batch at a time, and waits for it: a
/// writer whose writes block (a file, a pipe, a terminal) must run them on a thread of its own
/// and suspend meanwhile, never blocking Swift's cooperative pool (``FileHandleLogWriter`` does).
public protocol LogWriter: Sendable {
    /// Writes `lines` in order; none has a trailing newline.
    func write(_ lines: [String]) async

    /// Opens its file again after the lines being written (logrotate moved it away); writers
    /// of no file do nothing. Lines written later go to the new file.
    func reopen() async
}

extension LogWriter {
    /// Writes one line (no trailing newline).
    public func write(_ line: String) async { await write([line]) }

    /// Does nothing: the writer has no file to reopen.
    public func reopen() async {}
}

/// Writes lines to a file handle: standard error, standard output, or a file opened for append.
///
/// Every `write(2)` runs on the writer's own ``BlockingIOThread``: a stalled disk or a terminal
/// nobody reads delays the log's own mailbox (whose `wait` policy then holds back publishers
/// that wait), never the other tasks of the process.
public final class FileHandleLogWriter: LogWriter {
    private let handle: SyncLock<FileHandle>
    /// The file it appends to, reopened by ``reopen()``; nil for a handle given as such.
    private let path: String?
    /// The thread every write runs on.
    let io: BlockingIOThread
    /// Writes bytes to the handle (a seam: tests park or fail it).
    let writeBytes: SyncLock<@Sendable (FileHandle, Data) -> Void>

    /// Writes to `handle`.
    public convenience init(handle: FileHandle) {
        self.init(handle: handle, path: nil)
    }

    private init(handle: FileHandle, path: String?) {
        self.handle = SyncLock(handle)
        self.path = path
        self.io = BlockingIOThread(name: "herald.log-io")
        self.writeBytes = SyncLock({ handle, bytes in try? handle.write(contentsOf: bytes) })
    }

    /// Writes to standard error.
    public static func standardError() -> FileHandleLogWriter { FileHandleLogWriter(handle: .standardError) }

    /// Writes to standard output.
    public static func standardOutput() -> FileHandleLogWriter { FileHandleLogWriter(handle: .standardOutput) }

    /// Appends to the file at `path`, creating it (mode 0600) and its directory when missing.
    ///
    /// Called once, when the log subscriber is made (the daemon does so on a service's start):
    /// a `mkdir` and an `open(2)`, no write (Foundation's `createFile` would write a temporary
    /// file and rename it, on the caller's thread).
    ///
    /// - Throws: when the file cannot be created or opened.
    public static func appending(toFile path: String) throws -> FileHandleLogWriter {
        FileHandleLogWriter(handle: try openAppending(path), path: path)
    }

    private static func openAppending(_ path: String) throws -> FileHandle {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                                                          NSLocalizedDescriptionKey: "\(path): \(String(cString: strerror(errno)))"])
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Opens the file again (creating it) on the writer's thread, after the lines being written;
    /// when it cannot be opened, the old descriptor stays in use.
    public func reopen() async {
        guard let path else { return }
        await io.run { [self] in
            if let reopened = try? Self.openAppending(path) { handle.withLock { $0 = reopened } }
        }
    }

    /// Writes the lines, each followed by a newline, in one `write(2)` on the writer's thread;
    /// returns once it is done.
    public func write(_ lines: [String]) async {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text += "\n"
        let bytes = Data(text.utf8)
        let write = writeBytes.withLock { $0 }
        await io.run { [self] in write(handle.withLock { $0 }, bytes) }
    }
}

/// Keeps lines in memory: for tests, and for programs that show recent log lines.
public final class InMemoryLogWriter: LogWriter {
    private let storage = SyncLock<[String]>([])

    /// Creates an empty writer.
    public init() {}

    /// Records the lines.
    public func write(_ lines: [String]) async {
        storage.withLock { $0.append(contentsOf: lines) }
    }

    /// The lines written so far, oldest first.
    public var lines: [String] { storage.withLock { $0 } }
}
