import Foundation

extension ArchiveReader {
    /// How many of an archive's last lines ``lastSequence(window:)`` looks at by default.
    public static let sequenceWindow = 64

    /// The largest `seq` among the archive's last `window` complete lines: the live file's,
    /// then, when it holds fewer (it may be empty just after a rotation), the newest rotated
    /// files'. A daemon starts its bus after it, so numbers do not repeat across restarts.
    ///
    /// More than the last line, because publishers race between numbering an event and queueing
    /// it: the lines near the end may be a few numbers out of order. Each file is read backwards
    /// in chunks, so only the end of the archive is read. A torn last line is left out (it was
    /// never acknowledged, and the file sink moves it to `<path>.torn` when it opens the file),
    /// and so are lines without a `seq`; ``patterns`` do not apply.
    ///
    /// - Returns: nil when no file holds a complete line with a `seq` (or none exists).
    /// - Throws: when a file exists but cannot be read.
    public func lastSequence(window: Int = sequenceWindow) throws -> UInt64? {
        var largest: UInt64?
        var remaining = window
        for file in files().reversed() where remaining > 0 {
            try Self.forEachCompleteLineBackwards(in: file) { line in
                guard let sequence = Self.sequence(in: line) else { return true }
                largest = max(largest ?? sequence, sequence)
                remaining -= 1
                return remaining > 0
            }
        }
        return largest
    }

    /// Calls `body` with each newline-terminated line of the file, last first, without the
    /// newline, until it returns false; bytes after the last newline (a torn line) are skipped.
    static func forEachCompleteLineBackwards(in path: String, chunkSize: Int = 16 * 1024,
                                             _ body: (Data) throws -> Bool) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let newline = UInt8(ascii: "\n")
        var position = try handle.seekToEnd()
        // The file's bytes from `position` on that are not handed out yet.
        var pending: [UInt8] = []
        // Whether `pending` ends at the end of a complete line (the torn tail is cut off).
        var complete = false
        while true {
            if position > 0 {
                let start = position - min(position, UInt64(max(1, chunkSize)))
                try handle.seek(toOffset: start)
                let chunk = try handle.read(upToCount: Int(position - start)) ?? Data()
                guard chunk.count == Int(position - start) else {
                    throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path])
                }
                pending = [UInt8](chunk) + pending
                position = start
            }
            if !complete {
                guard let last = pending.lastIndex(of: newline) else {
                    if position == 0 { return }
                    continue
                }
                pending.removeSubrange((last + 1)...)
                complete = true
            }
            // `pending` ends with a newline; each earlier newline closes the line before it.
            while let previous = pending[..<(pending.count - 1)].lastIndex(of: newline) {
                guard try body(Data(pending[(previous + 1)..<(pending.count - 1)])) else { return }
                pending.removeSubrange((previous + 1)...)
            }
            if position == 0 {
                _ = try body(Data(pending.dropLast()))
                return
            }
        }
    }

    /// The `seq` of a line, if it is a JSON object with one.
    static func sequence(in line: Data) -> UInt64? {
        try? JSONDecoder().decode(Numbered.self, from: line).seq
    }

    private struct Numbered: Decodable {
        var seq: UInt64
    }
}
