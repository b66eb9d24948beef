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
    /// in chunks, so only the end of the archive is read, each byte once, and at most
    /// ``readLimit`` bytes of a file. A torn last line is left out (it was never acknowledged,
    /// and the file sink moves it to `<path>.torn` when it opens the file), and so are lines
    /// longer than ``lineLimit`` and lines without a `seq`; ``patterns`` do not apply.
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

    /// The longest line a backward scan hands out, in bytes (the newline not counted): 1 MiB.
    /// The file sink sets no limit on what it writes; a longer line, complete or torn, is
    /// skipped like a torn one, without being held in memory, and the scan goes on before it.
    public static let lineLimit = 1 << 20
    /// The most bytes a backward scan reads from one file, counted from its end: 32 MiB. A
    /// longer stretch without a usable line (a huge torn tail, garbage) ends the file's scan
    /// there; ``lastSequence(window:)`` then goes on with the older files, as for a file that
    /// holds too few lines.
    public static let readLimit: UInt64 = 32 << 20

    /// Calls `body` with each newline-terminated line of the file, last first, without the
    /// newline, until it returns false; bytes after the last newline (a torn line) are skipped.
    /// Lines longer than `lineLimit` are skipped too; at most `readLimit` bytes are read.
    static func forEachCompleteLineBackwards(in path: String, chunkSize: Int = 64 * 1024, lineLimit: Int = lineLimit,
                                             readLimit: UInt64 = readLimit, _ body: (Data) throws -> Bool) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try forEachCompleteLineBackwards(size: size, chunkSize: chunkSize, lineLimit: lineLimit, readLimit: readLimit, read: { offset, count in
            try handle.seek(toOffset: offset)
            let bytes = [UInt8](try handle.read(upToCount: count) ?? Data())
            guard bytes.count == count else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path]) }
            return bytes
        }, body)
    }

    /// The scan over any byte source of `size` bytes: `read(offset, count)` returns exactly
    /// `count` bytes from `offset`.
    ///
    /// Linear: each byte is read once and copied at most twice (into its chunk, then into its
    /// line), whatever the lines' lengths; a line's bytes are held only while it fits the limit.
    static func forEachCompleteLineBackwards(size: UInt64, chunkSize: Int = 64 * 1024, lineLimit: Int = lineLimit,
                                             readLimit: UInt64 = readLimit,
                                             read: (_ offset: UInt64, _ count: Int) throws -> [UInt8],
                                             _ body: (Data) throws -> Bool) throws {
        let newline = UInt8(ascii: "\n")
        var position = size
        var bytesRead: UInt64 = 0
        // The line being gathered (the bytes between `position` and the newline that ends it),
        // as slices of the chunks read, last first; empty once the line is known to be too long.
        var pieces: [ArraySlice<UInt8>] = []
        var length = 0
        var tooLong = false
        // Whether a newline has been seen: before it, the bytes are the torn tail.
        var inLine = false
        func line(_ head: ArraySlice<UInt8>) -> Data {
            var data = Data(capacity: head.count + length)
            data.append(contentsOf: head)
            for piece in pieces.reversed() { data.append(contentsOf: piece) }
            return data
        }
        while position > 0, bytesRead < readLimit {
            let count = Int(min(position, UInt64(max(1, chunkSize)), readLimit - bytesRead))
            let chunk = try read(position - UInt64(count), count)
            bytesRead += UInt64(count)
            position -= UInt64(count)
            var end = chunk.endIndex
            while let found = chunk[..<end].lastIndex(of: newline) {
                let head = chunk[(found + 1)..<end]
                if inLine, !tooLong, length + head.count <= lineLimit {
                    guard try body(line(head)) else { return }
                }
                inLine = true
                pieces = []
                length = 0
                tooLong = false
                end = found
            }
            // What is left of the chunk begins the line that ends at the chunk's first newline.
            guard inLine, !tooLong else { continue }
            length += end - chunk.startIndex
            if length > lineLimit {
                tooLong = true
                pieces = []
            } else {
                pieces.append(chunk[..<end])
            }
        }
        // The file's first line has no newline before it.
        if position == 0, inLine, !tooLong {
            _ = try body(line([]))
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
