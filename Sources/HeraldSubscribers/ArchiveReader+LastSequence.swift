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
    /// without a `seq`; a complete line longer than ``lineLimit`` is not parsed but counts by
    /// the `{"seq":N,` the file sink writes first. ``patterns`` do not apply.
    ///
    /// - Returns: nil when no file holds a complete line with a `seq` (or none exists).
    /// - Throws: when a file exists but cannot be read.
    public func lastSequence(window: Int = sequenceWindow) throws -> UInt64? {
        var largest: UInt64?
        var remaining = window
        func count(_ sequence: UInt64?) -> Bool {
            guard let sequence else { return true }
            largest = max(largest ?? sequence, sequence)
            remaining -= 1
            return remaining > 0
        }
        for file in files().reversed() where remaining > 0 {
            // A complete line over the limit still counts, by the `seq` the file sink writes first.
            try Self.forEachCompleteLineBackwards(in: file, oversized: { count(Self.leadingSequence(in: $0)) }) { line in
                count(Self.sequence(in: line))
            }
        }
        return largest
    }

    /// The longest line a backward scan hands out, in bytes (the newline not counted): 1 MiB.
    /// The file sink sets no limit on what it writes; a longer line, complete or torn, is not
    /// held in memory or handed out (only a complete one's first bytes are, for its `seq`), and
    /// the scan goes on before it.
    public static let lineLimit = 1 << 20
    /// The most bytes a backward scan reads from one file, counted from its end: 32 MiB. A
    /// longer stretch without a usable line (a huge torn tail, garbage) ends the file's scan
    /// there; ``lastSequence(window:)`` then goes on with the older files, as for a file that
    /// holds too few lines.
    public static let readLimit: UInt64 = 32 << 20

    /// Calls `body` with each newline-terminated line of the file, last first, without the
    /// newline, until it returns false; bytes after the last newline (a torn line) are skipped.
    /// A complete line longer than `lineLimit` goes to `oversized` instead, as its first
    /// ``oversizedPrefixLength`` bytes; at most `readLimit` bytes are read.
    static func forEachCompleteLineBackwards(in path: String, chunkSize: Int = 64 * 1024, lineLimit: Int = lineLimit,
                                             readLimit: UInt64 = readLimit, oversized: (Data) throws -> Bool = { _ in true },
                                             _ body: (Data) throws -> Bool) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try forEachCompleteLineBackwards(size: size, chunkSize: chunkSize, lineLimit: lineLimit, readLimit: readLimit, read: { offset, count in
            try handle.seek(toOffset: offset)
            let bytes = [UInt8](try handle.read(upToCount: count) ?? Data())
            guard bytes.count == count else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path]) }
            return bytes
        }, oversized: oversized, body)
    }

    /// The scan over any byte source of `size` bytes: `read(offset, count)` returns exactly
    /// `count` bytes from `offset`.
    ///
    /// Linear: each byte is read once and copied at most twice (into its chunk, then into its
    /// line), whatever the lines' lengths; a line's bytes are held only while it fits the limit.
    static func forEachCompleteLineBackwards(size: UInt64, chunkSize: Int = 64 * 1024, lineLimit: Int = lineLimit,
                                             readLimit: UInt64 = readLimit,
                                             read: (_ offset: UInt64, _ count: Int) throws -> [UInt8],
                                             oversized: (Data) throws -> Bool = { _ in true },
                                             _ body: (Data) throws -> Bool) throws {
        let newline = UInt8(ascii: "\n")
        var position = size
        var bytesRead: UInt64 = 0
        // The line being gathered (the bytes between `position` and the newline that ends it),
        // as slices of the chunks read, last first; empty once the line is known to be too long.
        var pieces: [ArraySlice<UInt8>] = []
        var length = 0
        var tooLong = false
        // Once the line is too long: its first bytes seen so far.
        var opening: [UInt8] = []
        // Whether a newline has been seen: before it, the bytes are the torn tail.
        var inLine = false
        func line(_ head: ArraySlice<UInt8>) -> Data {
            var data = Data(capacity: head.count + length)
            data.append(contentsOf: head)
            for piece in pieces.reversed() { data.append(contentsOf: piece) }
            return data
        }
        // The first bytes of `head` followed by what is known of the line after it.
        func firstBytes(_ head: ArraySlice<UInt8>) -> [UInt8] {
            var bytes = Array(head.prefix(oversizedPrefixLength))
            for piece in tooLong ? [opening[...]] : Array(pieces.reversed()) where bytes.count < oversizedPrefixLength {
                bytes += piece.prefix(oversizedPrefixLength - bytes.count)
            }
            return bytes
        }
        while position > 0, bytesRead < readLimit {
            let count = Int(min(position, UInt64(max(1, chunkSize)), readLimit - bytesRead))
            let chunk = try read(position - UInt64(count), count)
            bytesRead += UInt64(count)
            position -= UInt64(count)
            var end = chunk.endIndex
            while let found = chunk[..<end].lastIndex(of: newline) {
                let head = chunk[(found + 1)..<end]
                if inLine {
                    if !tooLong, length + head.count <= lineLimit {
                        guard try body(line(head)) else { return }
                    } else {
                        guard try oversized(Data(firstBytes(head))) else { return }
                    }
                }
                inLine = true
                pieces = []
                opening = []
                length = 0
                tooLong = false
                end = found
            }
            // What is left of the chunk begins the line that ends at the chunk's first newline.
            guard inLine else { continue }
            let rest = chunk[..<end]
            if tooLong {
                opening = firstBytes(rest)
                continue
            }
            length += rest.count
            if length > lineLimit {
                opening = firstBytes(rest)
                tooLong = true
                pieces = []
            } else {
                pieces.append(rest)
            }
        }
        // The file's first line has no newline before it.
        if position == 0, inLine {
            _ = try tooLong ? oversized(Data(opening)) : body(line([]))
        }
    }

    /// How many bytes of a line over the ``lineLimit`` the scan passes on (enough for the `seq`
    /// the file sink writes first).
    static let oversizedPrefixLength = 64

    /// The `seq` at the start of a line as the file sink writes it: `{"seq":123,`.
    static func leadingSequence(in prefix: Data) -> UInt64? {
        let opening = Array(#"{"seq":"#.utf8)
        guard prefix.starts(with: opening) else { return nil }
        let digits = prefix.dropFirst(opening.count).prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard !digits.isEmpty, let next = prefix.dropFirst(opening.count + digits.count).first,
            next == UInt8(ascii: ",") || next == UInt8(ascii: "}") else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }

    /// The `seq` of a line, if it is a JSON object with one.
    static func sequence(in line: Data) -> UInt64? {
        try? JSONDecoder().decode(Numbered.self, from: line).seq
    }

    private struct Numbered: Decodable {
        var seq: UInt64
    }
}
