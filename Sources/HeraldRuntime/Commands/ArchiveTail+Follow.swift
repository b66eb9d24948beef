import Foundation
import HeraldIO
import HeraldSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ArchiveTail {
    /// `herald tail --follow`: shows the rotated files once, then the live file from its start,
    /// and then what is appended to it, until a stop signal (with `stopOnSignals`) or the calling
    /// task's cancellation.
    ///
    /// It waits on the file (``FileChangeWatcher``: inotify on Linux), not on a timer; every read
    /// runs on a thread of its own. A rotation (the live file renamed away and made anew) is
    /// followed: what was appended to the old file before it moved is shown, then the new file
    /// from its start. A file truncated in place is read again from its start. The command runs
    /// as a service of a `ServiceGroup` with the daemon's signal sequence.
    ///
    /// - Parameters:
    ///   - show: called with each run of lines, in order (on one task at a time).
    ///   - stopping: told when it begins to stop, and why (``DaemonStopping/signalAgain(_:)``: a
    ///     second signal, over a second after the first).
    /// - Throws: ``DaemonError`` when the file cannot be watched (no descriptor left).
    public func follow(stopOnSignals: Bool = false, show: @escaping @Sendable ([String]) -> Void,
                       stopping: @escaping @Sendable (DaemonStopping) -> Void = { _ in }) async throws(DaemonError) {
        do {
            try await SignalledCommand.run("tail", stopOnSignals: stopOnSignals, stopping: stopping) {
                try await followUntilCancelled(show: show)
            }
        } catch is CancellationError {
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError("\(path): cannot be followed: \(error)")
        }
    }

    private func followUntilCancelled(show: @escaping @Sendable ([String]) -> Void) async throws {
        // Watching first: a change made while the files are read is a change seen.
        let watcher = try FileChangeWatcher(path: path)
        defer { watcher.stop() }
        let io = BlockingIOThread(name: "herald.tail")
        let live = LiveFile(path: path)
        let rotated = files().filter { $0 != path }
        let first = await io.run { [self] in
            rotated.flatMap { file in FileManager.default.contents(atPath: file).map { lines(in: $0) } ?? [] }
                + live.readNew().flatMap(lines(in:))
        }
        if !first.isEmpty { show(first) }
        for await _ in watcher.changes {
            let next = await io.run { [self] in live.readNew().flatMap(lines(in:)) }
            if !next.isEmpty { show(next) }
        }
        // Cancelled (the changes end with the task), or the watcher stopped.
        live.close()
    }
}

/// The live file of a followed archive: its open descriptor (kept across a rotation until the
/// old file is read to its end), where reading stopped, and the unterminated end read so far.
///
/// Used from one thread at a time (the follower's I/O thread); `Sendable` through its lock.
private final class LiveFile: Sendable {
    private struct State {
        var descriptor: Int32 = -1
        var inode: UInt64 = 0
        var offset: Int64 = 0
        var pending: [UInt8] = []
    }

    private let path: String
    private let state = SyncLock(State())

    init(path: String) {
        self.path = path
    }

    deinit {
        close()
    }

    func close() {
        state.withLock { state in
            if state.descriptor >= 0 { closeDescriptor(state.descriptor) }
            state.descriptor = -1
        }
    }

    /// The whole lines appended since the last call, in runs to show one after the other: when
    /// the file was rotated away, the old file's last lines (its unterminated end included, to be
    /// shown as torn), then the new file's. Empty when nothing is new.
    func readNew() -> [Data] {
        state.withLock { state in
            var runs: [Data] = []
            var out: [UInt8] = []
            // At most twice: the old file to its end, then the new one from its start.
            for _ in 0..<2 {
                if state.descriptor < 0 {
                    state.descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    guard state.descriptor >= 0 else { break }
                    var info = stat()
                    _ = fstat(state.descriptor, &info)
                    state.inode = UInt64(info.st_ino)
                    (state.offset, state.pending) = (0, [])
                }
                var info = stat()
                if fstat(state.descriptor, &info) == 0, Int64(info.st_size) < state.offset {
                    // Truncated in place: it starts again.
                    (state.offset, state.pending) = (0, [])
                }
                Self.readToEnd(&state)
                if let last = state.pending.lastIndex(of: UInt8(ascii: "\n")) {
                    out += state.pending[...last]
                    state.pending.removeSubrange(...last)
                }
                var current = stat()
                let replaced = stat(path, &current) != 0 || UInt64(current.st_ino) != state.inode
                guard replaced else { break }
                // Rotated away (or deleted): the old file is read to its end; its torn end, if
                // any, is shown as such, and the new file (if any yet) is read from its start.
                runs.append(Data(out + state.pending))
                out = []
                closeDescriptor(state.descriptor)
                state.descriptor = -1
                (state.offset, state.pending) = (0, [])
            }
            if !out.isEmpty { runs.append(Data(out)) }
            return runs
        }
    }

    private static func readToEnd(_ state: inout State) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(state.descriptor, $0.baseAddress, $0.count, off_t(state.offset)) }
            guard count > 0 else { return }
            state.pending += buffer[..<count]
            state.offset += Int64(count)
        }
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
    _ = Darwin.close(descriptor)
    #endif
}
