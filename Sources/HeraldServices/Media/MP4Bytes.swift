import Foundation

/// A window of an MP4 file's bytes addressed by file offset; every read is bounds-checked and
/// throws ``MP4Error`` instead of trapping, so hostile input cannot crash the parser.
struct MP4Bytes {
    /// The bytes; any `startIndex` (slices of a caller's `Data` are used as they are).
    let data: Data
    /// The file offset of `data`'s first byte.
    let base: Int

    /// The file offset just past the last byte held.
    var end: Int { base + data.count }

    /// `count` bytes at file offset `offset`, or a `.truncated` error naming `what`.
    func bytes(at offset: Int, count: Int, for what: @autoclosure () -> String) throws -> Data {
        guard count >= 0, offset >= base, offset <= end, count <= end - offset else {
            throw MP4Error.truncated("\(what()) at offset \(offset) needs \(count) bytes but only \(max(0, end - offset)) remain", at: offset)
        }
        let start = data.startIndex + (offset - base)
        return data[start..<(start + count)]
    }

    /// A big-endian unsigned integer of `width` bytes (at most 8) at `offset`.
    func unsigned(at offset: Int, width: Int, for what: @autoclosure () -> String) throws -> UInt64 {
        try bytes(at: offset, count: width, for: what()).reduce(0) { $0 << 8 | UInt64($1) }
    }

    func uint8(at offset: Int, for what: @autoclosure () -> String) throws -> UInt8 {
        UInt8(truncatingIfNeeded: try unsigned(at: offset, width: 1, for: what()))
    }

    func uint32(at offset: Int, for what: @autoclosure () -> String) throws -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(at: offset, width: 4, for: what()))
    }

    func uint64(at offset: Int, for what: @autoclosure () -> String) throws -> UInt64 {
        try unsigned(at: offset, width: 8, for: what())
    }

    /// A four-character code at `offset`, each byte read as Latin-1 so any bytes make a string.
    func fourCC(at offset: Int, for what: @autoclosure () -> String) throws -> String {
        String(try bytes(at: offset, count: 4, for: what()).map { Character(Unicode.Scalar($0)) })
    }
}
