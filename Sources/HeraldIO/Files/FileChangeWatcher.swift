import HeraldSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells when a file may have changed (written, truncated, created, renamed away or deleted),
/// so that a reader looks again instead of polling on a timer.
///
/// On Linux it watches the file's directory with inotify (the name, not the inode, so that a
/// file rotated away and made anew is still followed); elsewhere, or while the directory does
/// not exist yet, it ticks every `fallbackInterval`. The waiting, `poll(2)` on the inotify
/// descriptor and a wake pipe, runs on a thread of its own, never on Swift's cooperative pool;
/// ``stop()`` (or releasing the watcher) signals the pipe, and the thread closes everything and
/// ends ``changes``.
///
/// A change is a hint, not a count: several may come as one element, and an element may come
/// with nothing new. `Sendable`: its state is the thread's, reached through the pipe, and a flag
/// behind a lock.
public final class FileChangeWatcher: Sendable {
    /// One element each time the file may have changed; finishes when the watcher stops.
    /// Iterate it from one task.
    public let changes: AsyncStream<Void>
    /// The watched file.
    public let path: String
    private let wake: WakePipe
    /// Whether ``stop()`` signalled the pipe: once only, since the thread then closes it (and its
    /// descriptor numbers may be reused).
    private let stopped = SyncLock(false)

    /// Starts watching `path` (which need not exist yet).
    ///
    /// - Parameter fallbackInterval: how often to look again where no change notification is
    ///   available (no inotify, or no directory yet to watch).
    /// - Throws: ``SystemError`` when the process has no descriptor left for the wake pipe.
    public init(path: String, fallbackInterval: Duration = .milliseconds(200)) throws(SystemError) {
        self.path = path
        let wake = try WakePipe()
        self.wake = wake
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.changes = changes
        let watch = Watch(path: path, fallback: Poll.milliseconds(fallbackInterval))
        NamedThread.start("herald.file-watch") {
            watch.loop(wake: wake, continuation: continuation)
        }
    }

    deinit {
        stop()
    }

    /// Stops watching: ``changes`` finishes once the thread has closed its descriptors. Safe to
    /// call more than once.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { wake.signal() }
    }
}

/// The watching thread's state: its inotify descriptor and watch (Linux), nothing elsewhere.
private struct Watch: Sendable {
    let path: String
    let fallback: Int32

    /// The directory to watch and the name in it.
    var directoryAndName: (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    func loop(wake: WakePipe, continuation: AsyncStream<Void>.Continuation) {
        defer {
            wake.close()
            continuation.finish()
        }
        #if canImport(Glibc)
        let (directory, name) = directoryAndName
        let notifications = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        defer { if notifications >= 0 { Glibc.close(notifications) } }
        let mask = UInt32(IN_MODIFY) | UInt32(IN_ATTRIB) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
            | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
        var watching = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if notifications >= 0, !watching {
                watching = inotify_add_watch(notifications, directory, mask) >= 0
                // Added after a tick: what changed before it is seen by the reader's next look.
                if watching { continuation.yield() }
            }
            switch Poll.wait(readable: watching ? notifications : -1, wakers: [wake.readEnd], milliseconds: watching ? -1 : fallback) {
            case .woken:
                return
            case .timedOut:
                if !watching { continuation.yield() }
            case .readable:
                var relevant = false
                var gone = false
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(notifications, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    Self.events(in: buffer[..<count]) { eventMask, eventName in
                        if eventName == name || eventName.isEmpty { relevant = true }
                        if eventMask & (UInt32(IN_IGNORED) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 { gone = true }
                    }
                }
                // The directory itself went away: watch again once it is back (ticking meanwhile).
                if gone { watching = false }
                if relevant || gone { continuation.yield() }
            }
        }
        #else
        while true {
            switch Poll.wait(readable: -1, wakers: [wake.readEnd], milliseconds: fallback) {
            case .woken: return
            case .timedOut, .readable: continuation.yield()
            }
        }
        #endif
    }

    #if canImport(Glibc)
    /// Calls `body` with the mask and name of each `inotify_event` in `bytes` (a name is empty for
    /// an event on the directory itself).
    static func events(in bytes: ArraySlice<UInt8>, _ body: (UInt32, String) -> Void) {
        // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[len]; }
        let header = 16
        var offset = bytes.startIndex
        while offset + header <= bytes.endIndex {
            let (mask, length) = bytes.withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 4, as: UInt32.self),
                 Int(raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 12, as: UInt32.self)))
            }
            let nameStart = offset + header
            let nameEnd = min(nameStart + length, bytes.endIndex)
            let name = bytes[nameStart..<nameEnd].prefix { $0 != 0 }
            body(mask, String(decoding: name, as: UTF8.self))
            offset = nameEnd
        }
    }
    #endif
}
