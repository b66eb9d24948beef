import Foundation

/// Builds small MP4 files with real ISO BMFF boxes, for tests that need a video the upload
/// limits accept (or refuse on purpose):
///
///     ftyp, moov { mvhd, [trak 'soun'], trak { tkhd, mdia { mdhd, hdlr 'vide', minf { vmhd, stbl { stts } } } } }, mdat
///
/// The values read back exactly: the movie timescale is 1000, the video's `mdhd` timescale is
/// `fps × 1000` with one `stts` tick of 1000 per frame, and `tkhd` holds `width`/`height` as
/// 16.16 fixed point. There is no codec data: the file parses, it does not play.
public enum MP4Fixture {
    /// How the `mdat` box states its size.
    public enum SizeField: Sendable, Hashable {
        /// A 32-bit size.
        case compact
        /// `size == 1` followed by a 64-bit `largesize`.
        case large
        /// `size == 0`: the box runs to the end of the file.
        case toEnd
    }

    /// An MP4 file's bytes.
    ///
    /// - Parameters:
    ///   - duration: seconds, written as `mvhd` duration in a 1000 timescale (so milliseconds count).
    ///   - width, height: the video track's `tkhd` size in pixels.
    ///   - fps: frames per second (up to three decimals read back exactly); at least one frame is written.
    ///   - brand: the `ftyp` major brand, also the first compatible brand (then `mp41`).
    ///   - mdatBytes: how many sample-data bytes follow the boxes (a repeating 0…255 pattern).
    ///   - version: 0 or 1, the version of `mvhd`, `tkhd` and `mdhd` (1 uses 64-bit times).
    ///   - audioChannels: when set, an audio (`soun`) track with an `mp4a` entry of this many
    ///     channels comes before the video track.
    ///   - mdatSize: how the `mdat` header states its size.
    public static func make(
        duration: Double = 2, width: Int = 640, height: Int = 360, fps: Double = 30, brand: String = "isom",
        mdatBytes: Int = 1000, version: UInt8 = 0, audioChannels: Int? = nil, mdatSize: SizeField = .compact
    ) -> Data {
        let movieDuration = UInt64((duration * 1000).rounded())
        let frameTimescale = UInt32((fps * 1000).rounded())
        let frames = max(1, UInt32((duration * fps).rounded()))
        var tracks: [Data] = []
        if let audioChannels {
            let samples = max(1, UInt32((duration * 44_100 / 1024).rounded()))
            tracks.append(track(
                id: 2, handler: "soun", version: version, width: 0, height: 0, timescale: 44_100,
                sampleCount: samples, sampleDelta: 1024, movieDuration: movieDuration,
                mediaHeader: box("smhd", full(0, 0) + UInt16(0).bytes + UInt16(0).bytes),
                sampleDescription: audioEntry(channels: audioChannels)))
        }
        tracks.append(track(
            id: 1, handler: "vide", version: version, width: width, height: height, timescale: frameTimescale,
            sampleCount: frames, sampleDelta: 1000, movieDuration: movieDuration,
            mediaHeader: box("vmhd", full(0, 1) + Data(count: 8)), sampleDescription: nil))

        var file = box("ftyp", fourCC(brand) + UInt32(512).bytes + fourCC(brand) + fourCC("mp41"))
        file += box("moov", movieHeader(version: version, duration: movieDuration) + tracks.reduce(Data(), +))
        let samples = Data((0..<max(0, mdatBytes)).map { UInt8(truncatingIfNeeded: $0) })
        switch mdatSize {
        case .compact: file += box("mdat", samples)
        case .large: file += UInt32(1).bytes + fourCC("mdat") + UInt64(16 + samples.count).bytes + samples
        case .toEnd: file += UInt32(0).bytes + fourCC("mdat") + samples
        }
        return file
    }

    /// A video of exactly `byteCount` bytes that `MediaLimits.twitterVideo` accepts: the default
    /// ``make(duration:width:height:fps:brand:mdatBytes:version:audioChannels:mdatSize:)``
    /// file with its `mdat` grown to fit. Smaller than the boxes alone (a few hundred bytes)
    /// gives those boxes with an empty `mdat`.
    public static func sized(_ byteCount: Int) -> Data {
        make(mdatBytes: byteCount - make(mdatBytes: 0).count)
    }

    /// A box: 32-bit size, type, payload.
    public static func box(_ type: String, _ payload: Data) -> Data {
        UInt32(8 + payload.count).bytes + fourCC(type) + payload
    }

    private static func full(_ version: UInt8, _ flags: UInt32) -> Data {
        Data([version]) + flags.bytes.suffix(3)
    }

    private static func fourCC(_ code: String) -> Data {
        Data((Array(code.utf8) + [32, 32, 32, 32]).prefix(4))
    }

    /// Creation and modification times (zero) and the given fields, 32 or 64 bits by version.
    private static func times(_ version: UInt8, _ id: UInt32?, timescale: UInt32?, duration: UInt64) -> Data {
        var data = version == 1 ? Data(count: 16) : Data(count: 8)
        if let id { data += id.bytes + UInt32(0).bytes }
        if let timescale { data += timescale.bytes }
        data += version == 1 ? duration.bytes : UInt32(truncatingIfNeeded: duration).bytes
        return data
    }

    private static let unityMatrix: Data = [0x1_0000, 0, 0, 0, 0x1_0000, 0, 0, 0, 0x4000_0000]
        .map { UInt32($0).bytes }.reduce(Data(), +)

    private static func movieHeader(version: UInt8, duration: UInt64) -> Data {
        box("mvhd", full(version, 0) + times(version, nil, timescale: 1000, duration: duration)
            + UInt32(0x1_0000).bytes + UInt16(0x100).bytes + Data(count: 10) + unityMatrix + Data(count: 24) + UInt32(3).bytes)
    }

    private static func track(
        id: UInt32, handler: String, version: UInt8, width: Int, height: Int, timescale: UInt32, sampleCount: UInt32,
        sampleDelta: UInt32, movieDuration: UInt64, mediaHeader: Data, sampleDescription: Data?
    ) -> Data {
        let volume: UInt16 = handler == "soun" ? 0x100 : 0
        let trackHeader = box("tkhd", full(version, 3) + times(version, id, timescale: nil, duration: movieDuration)
            + Data(count: 8) + UInt16(0).bytes + UInt16(0).bytes + volume.bytes + UInt16(0).bytes + unityMatrix
            + UInt32(truncatingIfNeeded: width << 16).bytes + UInt32(truncatingIfNeeded: height << 16).bytes)
        let mediaDuration = UInt64(sampleCount) * UInt64(sampleDelta)
        let header = box("mdhd", full(version, 0) + times(version, nil, timescale: timescale, duration: mediaDuration)
            + UInt16(0x55C4).bytes + UInt16(0).bytes)  // language "und"
        let name = handler == "vide" ? "VideoHandler" : "SoundHandler"
        let handlerBox = box("hdlr", full(0, 0) + UInt32(0).bytes + fourCC(handler) + Data(count: 12) + Data(name.utf8) + Data([0]))
        // Two stts entries when there are frames to split, so readers must sum them.
        let entries: [(count: UInt32, delta: UInt32)] =
            sampleCount > 1 ? [(sampleCount - 1, sampleDelta), (UInt32(1), sampleDelta)] : [(sampleCount, sampleDelta)]
        let timeToSample = box("stts", full(0, 0) + UInt32(entries.count).bytes + entries.map { $0.count.bytes + $0.delta.bytes }.reduce(Data(), +))
        var table = Data()
        if let sampleDescription { table += box("stsd", full(0, 0) + UInt32(1).bytes + sampleDescription) }
        table += timeToSample
        let mediaInformation = box("minf", mediaHeader + box("stbl", table))
        return box("trak", trackHeader + box("mdia", header + handlerBox + mediaInformation))
    }

    /// An `mp4a` sample entry: reserved, data reference 1, reserved, channels, 16-bit samples, 44.1 kHz.
    private static func audioEntry(channels: Int) -> Data {
        box("mp4a", Data(count: 6) + UInt16(1).bytes + Data(count: 8) + UInt16(truncatingIfNeeded: channels).bytes
            + UInt16(16).bytes + Data(count: 4) + UInt32(44_100 << 16).bytes)
    }
}

extension FixedWidthInteger {
    /// Big-endian bytes.
    fileprivate var bytes: Data { withUnsafeBytes(of: bigEndian) { Data($0) } }
}
