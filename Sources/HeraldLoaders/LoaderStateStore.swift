import Foundation
import HeraldIO
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where loaders keep their ``LoaderState``: one small JSON file per loader, `<directory>/<id>.json`.
///
/// Writes are atomic (a temporary file in the same directory, then `rename`), so a crash leaves
/// the old state or the new one, never half of each. A file that cannot be read, is not a state,
/// or holds a state that cannot be trusted (see ``LoaderState/problem``) is renamed to
/// `<id>.json.corrupt-<unix time>` and reported, never fatal and never used. With no
/// directory, nothing is kept.
///
/// ``load(_:)`` and ``save(_:for:)`` do the file I/O on the ``io`` thread it is given, never on
/// Swift's cooperative pool. The daemon gives the same thread to its post schedulers' outboxes
/// (`PostScheduler`'s `io`): being one first-in-first-out thread is what orders a loader's
/// state after the intents its announcement queued, and the thread's ``BlockingIOThread/holds``
/// (intents the outbox could not write yet) is what makes ``save(_:for:)`` refuse (see
/// Documentation/Daemon.md, "Posting"). ``read(_:)`` and ``write(_:for:)`` do the same work on
/// the caller's thread.
public struct LoaderStateStore: LoaderStateStorage {
    /// What reading a state file found.
    public enum ReadResult: Sendable, Hashable {
        /// No file (or no directory configured): start afresh.
        case missing
        /// The stored state.
        case loaded(LoaderState)
        /// The file could not be read or used; it was moved to `movedTo` (nil if the rename
        /// failed too). `reason` says what is wrong with it.
        case corrupt(path: String, movedTo: String?, reason: String)
    }

    /// The largest state file read; a larger one is set aside (a state holds a marker and at
    /// most a bucket's ids).
    public static let maxFileSize = 16 << 20

    /// The directory, or nil to keep nothing.
    public let directory: URL?

    /// The thread ``load(_:)`` and ``save(_:for:)`` run on, shared with the post outboxes whose
    /// intents must reach the disk before a loader's state (see the type's notes).
    public let io: BlockingIOThread

    /// Creates a store over `directory` (created on first write).
    ///
    /// - Parameter io: the thread its async I/O runs on. Give it the thread the post schedulers'
    ///   outboxes append on (the daemon makes one, `herald.state-io`, for both): a save then
    ///   waits behind the intents queued before it, and refuses while the outbox holds one it
    ///   could not write.
    public init(directory: URL?, io: BlockingIOThread) {
        self.directory = directory
        self.io = io
    }

    /// ``read(_:)`` on the store's I/O thread; the caller is suspended meanwhile.
    public func load(_ id: String) async -> ReadResult {
        await io.run { [self] in read(id) }
    }

    /// ``write(_:for:)`` on the store's I/O thread, after every job queued there before it (the
    /// post scheduler's intents among them); the caller is suspended meanwhile.
    ///
    /// - Throws: ``LoaderStateStoreError`` naming the directory or file and the system's reason.
    public func save(_ state: LoaderState, for id: String) async throws(LoaderStateStoreError) {
        try await io.run { [self] () throws(LoaderStateStoreError) in
            // A post intent this announcement queued may have been refused by the outbox and
            // held: saving now would mark the item handled while its post exists only in
            // memory. Not saved, the item is announced again after a restart instead.
            let held = io.holds
            guard held == 0 else {
                throw LoaderStateStoreError(operation: "save", path: fileURL(for: id)?.path ?? id,
                                            reason: "\(held) post intent\(held == 1 ? " is" : "s are") held until the outbox can be written")
            }
            try write(state, for: id)
        }
    }

    /// The directory's path (empty when nothing is kept).
    public var location: String { directory?.path ?? "" }

    /// The state file of loader `id`.
    public func fileURL(for id: String) -> URL? {
        directory?.appendingPathComponent("\(id).json")
    }

    /// Reads loader `id`'s state, setting aside a file that cannot be read or trusted.
    public func read(_ id: String) -> ReadResult {
        guard let url = fileURL(for: id) else { return .missing }
        let data: Data
        switch Self.contents(of: url.path) {
        case .missing: return .missing
        case .unreadable(let reason): return setAside(url, reason: reason)
        case .read(let bytes): data = bytes
        }
        let state: LoaderState
        do {
            state = try JSONDecoder().decode(LoaderState.self, from: data)
        } catch {
            return setAside(url, reason: Self.reason(error))
        }
        if let problem = state.problem { return setAside(url, reason: problem) }
        return .loaded(state)
    }

    private func setAside(_ url: URL, reason: String) -> ReadResult {
        let aside = url.path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
        let moved = rename(url.path, aside) == 0 ? aside : nil
        return .corrupt(path: url.path, movedTo: moved, reason: reason)
    }

    private enum Contents {
        case missing
        case unreadable(String)
        case read(Data)
    }

    /// The file's bytes; a missing file is a fresh start, anything else that stops the read is
    /// a reason in words (a directory, permissions, an I/O error).
    private static func contents(of path: String) -> Contents {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            // ENOTDIR: a parent is not a directory, so there is no file (writing will say why).
            return code == ENOENT || code == ENOTDIR ? .missing : .unreadable("it cannot be opened: \(LoaderStateStoreError.text(errno: code))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            return .unreadable("it cannot be examined: \(LoaderStateStoreError.text(errno: errno))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .unreadable("it is a directory")
        default: return .unreadable("it is not a regular file")
        }
        guard status.st_size <= maxFileSize else { return .unreadable("it is larger than \(maxFileSize >> 20) MiB") }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let got = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                return .unreadable("it cannot be read: \(LoaderStateStoreError.text(errno: errno))")
            }
            if got == 0 { return .read(data) }
            data.append(contentsOf: buffer[..<got])
            // It may have grown since fstat.
            guard data.count <= maxFileSize else { return .unreadable("it is larger than \(maxFileSize >> 20) MiB") }
        }
    }

    /// Writes loader `id`'s state atomically (mode 0600).
    ///
    /// - Throws: ``LoaderStateStoreError`` naming the directory or file and the system's reason.
    public func write(_ state: LoaderState, for id: String) throws(LoaderStateStoreError) {
        guard let directory, let url = fileURL(for: id) else { return }
        try Self.makeDirectory(directory.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(state)
        } catch {
            throw LoaderStateStoreError(operation: "encode the state for", path: url.path, reason: "\(error)")
        }
        let temporary = directory.appendingPathComponent(".\(id).json.\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw LoaderStateStoreError(operation: "create", path: temporary, errno: errno) }
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes { buffer in
                systemWrite(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let code = result < 0 ? errno : EIO
                close(descriptor)
                unlink(temporary)
                throw LoaderStateStoreError(operation: "write", path: temporary, errno: code)
            }
            written += result
        }
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(temporary)
            throw LoaderStateStoreError(operation: "write", path: temporary, errno: code)
        }
        guard rename(temporary, url.path) == 0 else {
            let code = errno
            unlink(temporary)
            throw LoaderStateStoreError(operation: "rename \(temporary) to", path: url.path, errno: code)
        }
    }

    /// `mkdir -p`: creates `path` and its missing parents (mode 0755 before the umask).
    private static func makeDirectory(_ path: String) throws(LoaderStateStoreError) {
        if mkdir(path, 0o755) == 0 { return }
        let code = errno
        switch code {
        case EEXIST:
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw LoaderStateStoreError(operation: "create the directory", path: path, errno: ENOTDIR)
            }
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else {
                throw LoaderStateStoreError(operation: "create the directory", path: path, errno: code)
            }
            try makeDirectory(parent)
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
                throw LoaderStateStoreError(operation: "create the directory", path: path, errno: errno)
            }
        default:
            throw LoaderStateStoreError(operation: "create the directory", path: path, errno: code)
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: String(describing: error)
        }
    }
}

// The store's own `read` and `write` hide the system calls inside it.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
