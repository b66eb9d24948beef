/// One ISO BMFF box header: where the box starts, how long its header is and how many bytes it
/// covers in all.
struct MP4Box {
    /// The four-character type, e.g. `moov`.
    var type: String
    /// The file offset of the box's first byte.
    var offset: Int
    /// 8 bytes, 16 with a 64-bit `largesize`, plus 16 for a `uuid` box's user type.
    var headerSize: Int
    /// The whole box in bytes, header included.
    var size: Int

    /// The file offset of the first payload byte.
    var payloadOffset: Int { offset + headerSize }
    /// The file offset just past the box.
    var end: Int { offset + size }
    /// The payload's length in bytes.
    var payloadSize: Int { size - headerSize }

    /// Reads the header at `offset` from `bytes`. `containerEnd` is where the enclosing box (or
    /// the file) ends: a box must fit before it, and `size == 0` means "up to it".
    static func header(in bytes: MP4Bytes, at offset: Int, containerEnd: Int) throws -> MP4Box {
        let size32 = try bytes.uint32(at: offset, for: "box header")
        let type = try bytes.fourCC(at: offset + 4, for: "box header")
        var headerSize = 8
        let size: Int
        switch size32 {
        case 1:
            let large = try bytes.uint64(at: offset + 8, for: "64-bit size of box '\(type)'")
            guard let value = Int(exactly: large) else {
                throw MP4Error.invalidValue("box '\(type)' at offset \(offset) claims \(large) bytes", at: offset)
            }
            headerSize = 16
            size = value
        case 0:
            size = containerEnd - offset
        default:
            size = Int(size32)
        }
        if type == "uuid" { headerSize += 16 }
        guard size >= headerSize else {
            throw MP4Error.invalidValue("box '\(type)' at offset \(offset) claims \(size) bytes, less than its \(headerSize)-byte header", at: offset)
        }
        guard size <= containerEnd - offset else {
            throw MP4Error.truncated("box '\(type)' at offset \(offset) claims \(size) bytes but only \(containerEnd - offset) remain", at: offset)
        }
        return MP4Box(type: type, offset: offset, headerSize: headerSize, size: size)
    }

    /// This box's bytes alone, so reads of its fields cannot run into the next box.
    func contents(in bytes: MP4Bytes) throws -> MP4Bytes {
        MP4Bytes(data: try bytes.bytes(at: offset, count: size, for: "box '\(type)'"), base: offset)
    }

    /// The boxes directly inside this one, in order. Needs the whole box in `bytes`.
    func children(in bytes: MP4Bytes) throws -> [MP4Box] {
        var result: [MP4Box] = []
        var cursor = payloadOffset
        while cursor < end {
            let child = try MP4Box.header(in: bytes, at: cursor, containerEnd: end)
            result.append(child)
            cursor = child.end  // size >= header size >= 8: always moves forward
        }
        return result
    }

    /// The first child of `type`, or nil when there is none.
    func child(_ type: String, in bytes: MP4Bytes) throws -> MP4Box? {
        try children(in: bytes).first { $0.type == type }
    }

    /// The first child of `type`, or a `.missingBox` error.
    func required(_ type: String, in bytes: MP4Bytes) throws -> MP4Box {
        guard let found = try child(type, in: bytes) else {
            throw MP4Error.missingBox("'\(self.type)' at offset \(offset) has no '\(type)' box", at: offset)
        }
        return found
    }

    /// A full box's version, refused unless it is 0 or 1.
    func version(in bytes: MP4Bytes) throws -> UInt8 {
        let version = try bytes.uint8(at: payloadOffset, for: "version of '\(type)'")
        guard version <= 1 else {
            throw MP4Error.invalidValue("'\(type)' at offset \(offset) has version \(version); only 0 and 1 are defined", at: offset)
        }
        return version
    }
}
