#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open JSON Lines journal: an `O_APPEND` descriptor and the size written. The one journal
/// of the module: the file sink's archive and the post scheduler's outbox are both written
/// through it (and their torn lines set aside the same way, to `<path>.torn`).
///
/// Every write is of whole lines (one, or several together) in one `write(2)`; a short or failed
/// write is rolled back with `ftruncate` to the size before it, so the file only ever holds whole
/// lines. Not thread-safe: ``FileSink`` and ``PostOutbox`` keep it behind their locks, and call
/// it on their own I/O threads only.
struct JSONLinesFile {
    let path: String
    private(set) var descriptor: Int32
    /// The file's size, which is where the next line starts.
    var size: Int
    /// The `write(2)` used for lines; tests swap it to force short writes.
    var writeLine: (Int32, UnsafeRawBufferPointer) -> Int = { systemWrite($0, $1.baseAddress, $1.count) }

    /// Opens (creating with mode 0600, and its parent directories) the archive at `path`, and
    /// repairs a torn last line.
    ///
    /// - Returns: the file, and what was moved away if the last line was torn.
    static func open(path: String) throws(FileSinkError) -> (JSONLinesFile, TornLineRepair?) {
        try createParentDirectories(of: path)
        let descriptor = try openDescriptor(path)
        var stat = stat()
        guard fstat(descriptor, &stat) == 0 else {
            let error = FileSinkError.system(.open, path: path)
            _ = systemClose(descriptor)
            throw error
        }
        var file = JSONLinesFile(path: path, descriptor: descriptor, size: Int(stat.st_size))
        do {
            let repair = try file.repairTornLine()
            return (file, repair)
        } catch {
            file.close()
            throw error
        }
    }

    private static func openDescriptor(_ path: String) throws(FileSinkError) -> Int32 {
        while true {
            let descriptor = systemOpen(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw FileSinkError.system(.open, path: path) }
        }
    }

    /// `mkdir -p` of the parent with mode 0700, so the error names the component that failed.
    private static func createParentDirectories(of path: String) throws(FileSinkError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = path[..<slash]
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST { throw FileSinkError.system(.createDirectory, path: prefix) }
            prefix += "/"
        }
    }

    /// Appends `line` (which ends with a newline) in one `write`.
    mutating func append(_ line: [UInt8]) throws(FileSinkError) {
        try append(line[...])
    }

    /// Appends `lines` (whole lines, the last ending with a newline) in one `write`.
    ///
    /// - Throws: on a failed or short write, after truncating the file back to its size before
    ///   the write, so no partial line stays.
    mutating func append(_ line: ArraySlice<UInt8>) throws(FileSinkError) {
        var written = -1
        repeat {
            written = line.withUnsafeBytes { writeLine(descriptor, $0) }
        } while written < 0 && errno == EINTR
        if written == line.count {
            size += written
            return
        }
        let error = written < 0
            ? FileSinkError.system(.write, path: path)
            : FileSinkError(.shortWrite(written: written, expected: line.count), path: path)
        if written > 0 { _ = Self.cut(descriptor, to: size) }
        throw error
    }

    /// Cuts the file back to `size` bytes (best effort: a failure leaves a whole line, which
    /// the caller has already reported as failed).
    mutating func truncate(to size: Int) {
        guard size < self.size, Self.cut(descriptor, to: size) else { return }
        self.size = size
    }

    /// `ftruncate`, again when a signal interrupts it.
    private static func cut(_ descriptor: Int32, to size: Int) -> Bool {
        while ftruncate(descriptor, off_t(size)) != 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Forces the file's data to the disk.
    func sync() throws(FileSinkError) {
        guard fsync(descriptor) == 0 else { throw FileSinkError.system(.sync, path: path) }
    }

    /// Closes the descriptor (idempotent).
    mutating func close() {
        guard descriptor >= 0 else { return }
        _ = systemClose(descriptor)
        descriptor = -1
    }

    /// Syncs and closes this file, shifts the rotated files by one (dropping the one beyond
    /// `keep`), renames this one to `.1` and opens a new, empty file at the same path.
    mutating func rotate(keep: Int) throws(FileSinkError) {
        try sync()
        close()
        if keep == 0 {
            guard unlink(path) == 0 || errno == ENOENT else { throw FileSinkError.system(.rotate, path: path) }
        } else {
            let oldest = FileSinkRotation.rotatedPath(path, index: keep)
            guard unlink(oldest) == 0 || errno == ENOENT else { throw FileSinkError.system(.rotate, path: oldest) }
            for index in stride(from: keep - 1, through: 1, by: -1) {
                let from = FileSinkRotation.rotatedPath(path, index: index)
                guard rename(from, FileSinkRotation.rotatedPath(path, index: index + 1)) == 0 || errno == ENOENT else {
                    throw FileSinkError.system(.rotate, path: from)
                }
            }
            guard rename(path, FileSinkRotation.rotatedPath(path, index: 1)) == 0 else {
                throw FileSinkError.system(.rotate, path: path)
            }
        }
        descriptor = try Self.openDescriptor(path)
        size = 0
        Self.syncDirectory(of: path)
    }

    /// Replaces the file at `path` with one holding exactly `bytes` (whole lines), atomically:
    /// written to `<path>.compact`, synced, renamed over `path`, the directory synced. A crash
    /// leaves either the old file or the new one.
    ///
    /// - Returns: the new file's size.
    /// - Throws: when the copy cannot be written or renamed; the old file is untouched (a
    ///   partly written copy may be left at `<path>.compact`, which the next replace truncates).
    @discardableResult
    static func replace(_ path: String, with bytes: [UInt8],
                        write: @escaping (Int32, UnsafeRawBufferPointer) -> Int = { systemWrite($0, $1.baseAddress, $1.count) })
        throws(FileSinkError) -> Int {
        let temporary = path + ".compact"
        guard unlink(temporary) == 0 || errno == ENOENT else { throw FileSinkError.system(.open, path: temporary) }
        var (copy, _) = try open(path: temporary)
        defer { copy.close() }
        copy.writeLine = write
        if !bytes.isEmpty { try copy.append(bytes[...]) }
        try copy.sync()
        guard rename(temporary, path) == 0 else { throw FileSinkError.system(.rename, path: path) }
        syncDirectory(of: path)
        return bytes.count
    }

    /// Appends `bytes` (whole lines) to the file at `path`, created with mode 0600, in one
    /// write, and syncs it: how torn and unreadable lines are set aside.
    static func appendAndSync(_ bytes: [UInt8], to path: String) throws(FileSinkError) {
        let descriptor = systemOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileSinkError.system(.open, path: path) }
        defer { _ = systemClose(descriptor) }
        var written = -1
        repeat {
            written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
        } while written < 0 && errno == EINTR
        guard written == bytes.count else {
            throw written < 0 ? FileSinkError.system(.write, path: path)
                              : FileSinkError(.shortWrite(written: written, expected: bytes.count), path: path)
        }
        guard fsync(descriptor) == 0 else { throw FileSinkError.system(.sync, path: path) }
    }

    /// Makes the renames durable; a failure here only weakens durability, so it is ignored.
    static func syncDirectory(of path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let descriptor = systemOpen(directory.isEmpty ? "/" : directory, O_RDONLY | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = systemClose(descriptor)
    }
}

// The module's own `open`, `write` and `close` names would shadow the C functions.
@inline(__always) func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, flags, mode)
    #else
    Darwin.open(path, flags, mode)
    #endif
}

@inline(__always) func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, buffer, count)
    #else
    Darwin.write(descriptor, buffer, count)
    #endif
}

@inline(__always) func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
