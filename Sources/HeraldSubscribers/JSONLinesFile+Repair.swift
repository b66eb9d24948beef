#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``JSONLinesFile`` moved away when it found a torn last line.
struct TornLineRepair: Sendable, Hashable {
    /// The bytes after the last newline.
    var byteCount: Int
    /// The file they were appended to.
    var movedTo: String
    /// The archive's size after the repair.
    var keptBytes: Int
}

extension JSONLinesFile {
    /// The file that receives torn last lines.
    static func tornPath(_ path: String) -> String { "\(path).torn" }

    /// If the file does not end with a newline, appends the bytes after the last newline (and a
    /// newline) to `<path>.torn`, syncs that, then truncates the archive to its last complete
    /// line. The torn bytes are saved before they are cut, so a crash during the repair loses
    /// nothing.
    mutating func repairTornLine() throws(FileSinkError) -> TornLineRepair? {
        guard size > 0 else { return nil }
        let keep = try lengthOfCompleteLines()
        guard keep < size else { return nil }
        let torn = try readBytes(from: keep, count: size - keep) + [UInt8(ascii: "\n")]
        let tornPath = Self.tornPath(path)
        do {
            try Self.appendAndSync(torn, to: tornPath)
        } catch {
            throw FileSinkError(.repair, path: tornPath, errorNumber: error.errorNumber)
        }
        guard ftruncate(descriptor, off_t(keep)) == 0 else { throw FileSinkError.system(.repair, path: path) }
        try sync()
        let moved = size - keep
        size = keep
        return TornLineRepair(byteCount: moved, movedTo: tornPath, keptBytes: keep)
    }

    /// The offset just past the last newline (0 when there is none), read backwards in chunks.
    private func lengthOfCompleteLines() throws(FileSinkError) -> Int {
        let chunk = 64 * 1024
        var end = size
        while end > 0 {
            let start = max(0, end - chunk)
            let bytes = try readBytes(from: start, count: end - start)
            if let last = bytes.lastIndex(of: UInt8(ascii: "\n")) { return start + last + 1 }
            end = start
        }
        return 0
    }

    private func readBytes(from offset: Int, count: Int) throws(FileSinkError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset + done))
            }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { throw FileSinkError.system(.repair, path: path) }
            done += read
        }
        return bytes
    }
}
