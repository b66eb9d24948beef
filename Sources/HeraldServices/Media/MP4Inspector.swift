import Foundation

/// Reads an MP4 (ISO base media) file's boxes far enough to summarise it as ``MP4Info``:
/// `ftyp` brands, `moov/mvhd` duration, and the video track's `tkhd` size and `mdhd`/`stts`
/// frame rate. Sample data (`mdat`) is never read.
///
/// Built for untrusted input: every read is bounds-checked, sizes are overflow-checked, and
/// the parser only descends the fixed path `moov/trak/mdia/minf/stbl`, so nesting cannot
/// exhaust the stack. Anything malformed throws ``MP4Error`` naming the box and its offset;
/// nothing traps. Stateless, so safe from any isolation.
public enum MP4Inspector {
    /// Summarises the MP4 file in `data`.
    ///
    /// - Throws: ``MP4Error`` when `data` does not start with `ftyp`, a box is cut short or
    ///   claims more bytes than its container holds, `moov`, `mvhd` or a video track (`hdlr`
    ///   type `vide`) with `tkhd`, `mdhd` and `stts` is missing, or a value is unusable.
    public static func inspect(_ data: Data) throws -> MP4Info {
        try inspect(byteCount: data.count, maxMetadataBytes: Int.max) { offset, count in
            let window = MP4Bytes(data: data, base: 0)
            return MP4Bytes(data: try window.bytes(at: offset, count: count, for: "box"), base: offset)
        }
    }

    /// Summarises the MP4 file at `url`, reading box headers, `ftyp` and `moov` only, so a
    /// large file's sample data stays on disk.
    ///
    /// - Parameter maxMetadataBytes: the largest `ftyp` or `moov` box read into memory.
    /// - Throws: ``MP4Error`` as ``inspect(_:)`` does, `.unreadable` when the file cannot be
    ///   opened or read, and `.invalidValue` for a `moov` over `maxMetadataBytes`.
    public static func inspect(contentsOf url: URL, maxMetadataBytes: Int = 16 * 1024 * 1024) throws -> MP4Info {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw MP4Error(kind: .unreadable, message: "cannot open \(url.path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        do {
            let size = try handle.seekToEnd()
            guard let byteCount = Int(exactly: size) else {
                throw MP4Error(kind: .unreadable, message: "\(url.path) is too large to address (\(size) bytes)")
            }
            return try inspect(byteCount: byteCount, maxMetadataBytes: maxMetadataBytes) { offset, count in
                try handle.seek(toOffset: UInt64(offset))
                // A short read (the file shrank) surfaces as a truncation error on first use.
                return MP4Bytes(data: try handle.read(upToCount: count) ?? Data(), base: offset)
            }
        } catch let error as MP4Error {
            throw error
        } catch {
            throw MP4Error(kind: .unreadable, message: "cannot read \(url.path): \(error.localizedDescription)")
        }
    }

    /// The top-level walk shared by both sources: `read(offset, count)` returns the bytes at a
    /// file offset (fewer only when the source is short).
    static func inspect(byteCount: Int, maxMetadataBytes: Int, read: (Int, Int) throws -> MP4Bytes) throws -> MP4Info {
        let headerWindow = 32  // enough for size, type, largesize and a uuid
        let start = try read(0, min(headerWindow, byteCount))
        guard byteCount >= 8, (try? start.fourCC(at: 4, for: "")) == "ftyp" else {
            throw MP4Error.notMP4("no ftyp box at offset 0")
        }
        var ftyp: (box: MP4Box, bytes: MP4Bytes)?
        var moov: (box: MP4Box, bytes: MP4Bytes)?
        var offset = 0
        while offset < byteCount {
            let window = offset == 0 ? start : try read(offset, min(headerWindow, byteCount - offset))
            let box = try MP4Box.header(in: window, at: offset, containerEnd: byteCount)
            if box.type == "moov", let moov {
                throw MP4Error.invalidValue("second 'moov' box at offset \(box.offset); the first is at \(moov.box.offset)", at: box.offset)
            }
            // Only the first ftyp (at offset 0) and the moov are read; mdat and the rest are skipped.
            if box.type == "moov" || (box.type == "ftyp" && ftyp == nil) {
                guard box.size <= maxMetadataBytes else {
                    throw MP4Error.invalidValue("box '\(box.type)' at offset \(box.offset) is \(box.size) bytes, over the \(maxMetadataBytes)-byte limit", at: box.offset)
                }
                let loaded = (box: box, bytes: try read(box.offset, box.size))
                if box.type == "ftyp" { ftyp = loaded } else { moov = loaded }
            }
            offset = box.end  // size >= header size >= 8: always moves forward
        }
        guard let ftyp else { throw MP4Error.notMP4("no ftyp box at offset 0") }
        guard let moov else { throw MP4Error.missingBox("no 'moov' box in \(byteCount) bytes") }
        var info = try movie(moov.box, in: moov.bytes, byteCount: byteCount)
        try brands(ftyp.box, in: ftyp.bytes, into: &info)
        return info
    }

    private static func brands(_ box: MP4Box, in file: MP4Bytes, into info: inout MP4Info) throws {
        let bytes = try box.contents(in: file)
        info.majorBrand = try bytes.fourCC(at: box.payloadOffset, for: "major brand of 'ftyp'")
        info.minorVersion = try bytes.uint32(at: box.payloadOffset + 4, for: "minor version of 'ftyp'")
        // A trailing partial brand is ignored rather than refused: the major brand is what matters.
        let count = (box.payloadSize - 8) / 4
        info.compatibleBrands = try (0..<max(0, count)).map {
            try bytes.fourCC(at: box.payloadOffset + 8 + 4 * $0, for: "compatible brand of 'ftyp'")
        }
    }

    private static func movie(_ moov: MP4Box, in file: MP4Bytes, byteCount: Int) throws -> MP4Info {
        let bytes = try moov.contents(in: file)
        let header = try moov.required("mvhd", in: bytes)
        let (timescale, duration) = try timing(of: header, in: bytes)
        var info = MP4Info(
            majorBrand: "", duration: Double(duration) / Double(timescale), width: 0, height: 0, frameRate: 0,
            trackHandlers: [], byteCount: byteCount)
        var video: MP4Box?
        for track in try moov.children(in: bytes) where track.type == "trak" {
            let handler = try handlerType(of: track, in: bytes)
            info.trackHandlers.append(handler ?? "")
            if handler == "vide", video == nil { video = track }
            if handler == "soun", let channels = try audioChannels(of: track, in: bytes) {
                info.audioChannelCounts.append(channels)
            }
        }
        guard let video else {
            let found = info.trackHandlers.isEmpty ? "no tracks" : "tracks: " + info.trackHandlers.map { $0.isEmpty ? "?" : $0 }.joined(separator: ", ")
            throw MP4Error.missingBox("no video track ('hdlr' type 'vide') in 'moov' at offset \(moov.offset); \(found)", at: moov.offset)
        }
        try videoTrack(video, in: bytes, into: &info)
        return info
    }

    /// The timescale and duration of an `mvhd` or `mdhd`, which share their layout: after
    /// version and flags, creation and modification times, then timescale and duration
    /// (times and duration 32-bit in version 0, 64-bit in version 1).
    private static func timing(of box: MP4Box, in file: MP4Bytes) throws -> (timescale: UInt32, duration: UInt64) {
        let bytes = try box.contents(in: file)
        let version = try box.version(in: bytes)
        let timescaleOffset = box.payloadOffset + 4 + (version == 1 ? 16 : 8)
        let timescale = try bytes.uint32(at: timescaleOffset, for: "timescale of '\(box.type)'")
        guard timescale > 0 else {
            throw MP4Error.invalidValue("'\(box.type)' at offset \(box.offset) has timescale 0", at: box.offset)
        }
        let duration = try bytes.unsigned(at: timescaleOffset + 4, width: version == 1 ? 8 : 4, for: "duration of '\(box.type)'")
        return (timescale, duration)
    }

    private static func handlerType(of track: MP4Box, in bytes: MP4Bytes) throws -> String? {
        guard let media = try track.child("mdia", in: bytes), let handler = try media.child("hdlr", in: bytes) else { return nil }
        // version and flags, pre_defined, then handler_type
        return try handler.contents(in: bytes).fourCC(at: handler.payloadOffset + 8, for: "handler type of 'hdlr'")
    }

    private static func sampleTable(of track: MP4Box, in bytes: MP4Bytes) throws -> MP4Box {
        let media = try track.required("mdia", in: bytes)
        return try media.required("minf", in: bytes).required("stbl", in: bytes)
    }

    /// The first `stsd` audio sample entry's channel count, or nil when the track has none.
    private static func audioChannels(of track: MP4Box, in file: MP4Bytes) throws -> Int? {
        guard let media = try track.child("mdia", in: file), let info = try media.child("minf", in: file),
            let table = try info.child("stbl", in: file), let descriptions = try table.child("stsd", in: file)
        else { return nil }
        let bytes = try descriptions.contents(in: file)
        let entries = descriptions.payloadOffset + 4
        guard try bytes.uint32(at: entries, for: "entry count of 'stsd'") > 0 else { return nil }
        // sample entry: size, format, 6 reserved, data_reference_index, 8 reserved, channelcount
        let channels = try bytes.unsigned(at: entries + 4 + 24, width: 2, for: "channel count of the 'stsd' audio entry")
        return Int(channels)
    }

    private static func videoTrack(_ track: MP4Box, in file: MP4Bytes, into info: inout MP4Info) throws {
        let header = try track.required("tkhd", in: file)
        let headerBytes = try header.contents(in: file)
        // After version and flags: times, track_ID, reserved, duration (20 or 32 bytes), then
        // reserved, layer, alternate_group, volume, reserved and the matrix (52 bytes).
        let sizeOffset = header.payloadOffset + 4 + (try header.version(in: headerBytes) == 1 ? 32 : 20) + 52
        info.width = Double(try headerBytes.uint32(at: sizeOffset, for: "width of 'tkhd'")) / 65536
        info.height = Double(try headerBytes.uint32(at: sizeOffset + 4, for: "height of 'tkhd'")) / 65536

        let media = try track.required("mdia", in: file)
        let mediaHeader = try media.required("mdhd", in: file)
        let (timescale, _) = try timing(of: mediaHeader, in: file)

        let times = try sampleTable(of: track, in: file).required("stts", in: file)
        let bytes = try times.contents(in: file)
        let countOffset = times.payloadOffset + 4
        let entryCount = try bytes.uint32(at: countOffset, for: "entry count of 'stts'")
        let room = (times.end - countOffset - 4) / 8
        guard entryCount <= room else {
            throw MP4Error.truncated("'stts' at offset \(times.offset) lists \(entryCount) entries but has room for \(max(0, room))", at: times.offset)
        }
        var samples: UInt64 = 0
        var ticks: UInt64 = 0
        for index in 0..<Int(entryCount) {
            let entry = countOffset + 4 + 8 * index
            let count = UInt64(try bytes.uint32(at: entry, for: "'stts' entry"))
            let delta = UInt64(try bytes.uint32(at: entry + 4, for: "'stts' entry"))
            let (newSamples, samplesOverflow) = samples.addingReportingOverflow(count)
            let (newTicks, ticksOverflow) = ticks.addingReportingOverflow(count * delta)  // two UInt32s: cannot overflow
            guard !samplesOverflow, !ticksOverflow else {
                throw MP4Error.invalidValue("'stts' at offset \(times.offset) sums past 64 bits", at: times.offset)
            }
            samples = newSamples
            ticks = newTicks
        }
        guard samples > 0, ticks > 0 else {
            throw MP4Error.invalidValue(
                "'stts' at offset \(times.offset) lists \(samples) samples over \(ticks) ticks; the frame rate is unknown", at: times.offset)
        }
        info.frameCount = samples
        info.frameRate = Double(samples) * Double(timescale) / Double(ticks)
    }
}
