/// What ``MP4Inspector`` read from an MP4 file: brands, length, the video track's size and
/// frame rate, the tracks present. Plain values, so it is `Sendable` and can be compared.
public struct MP4Info: Sendable, Hashable {
    /// The `ftyp` major brand, e.g. `isom` or `mp42`.
    public var majorBrand: String
    /// The `ftyp` minor version.
    public var minorVersion: UInt32
    /// The `ftyp` compatible brands, in file order.
    public var compatibleBrands: [String]
    /// The presentation length in seconds: `mvhd` duration over its timescale.
    public var duration: Double
    /// The video track's width in pixels, from its `tkhd` 16.16 fixed-point value.
    public var width: Double
    /// The video track's height in pixels, from its `tkhd` 16.16 fixed-point value.
    public var height: Double
    /// The video track's frames per second: its `stts` sample count over the samples' total
    /// duration in its `mdhd` timescale.
    public var frameRate: Double
    /// How many samples (frames) the video track's `stts` lists.
    public var frameCount: UInt64
    /// The `hdlr` handler type of every track in file order (`vide`, `soun`, …); `""` for a
    /// track without one.
    public var trackHandlers: [String]
    /// The channel count of each audio (`soun`) track whose `stsd` has a sample entry, in file order.
    public var audioChannelCounts: [Int]
    /// The file's length in bytes.
    public var byteCount: Int

    /// Creates a summary; ``MP4Inspector`` is the usual source.
    public init(
        majorBrand: String, minorVersion: UInt32 = 0, compatibleBrands: [String] = [], duration: Double, width: Double,
        height: Double, frameRate: Double, frameCount: UInt64 = 0, trackHandlers: [String] = ["vide"],
        audioChannelCounts: [Int] = [], byteCount: Int
    ) {
        self.majorBrand = majorBrand
        self.minorVersion = minorVersion
        self.compatibleBrands = compatibleBrands
        self.duration = duration
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.frameCount = frameCount
        self.trackHandlers = trackHandlers
        self.audioChannelCounts = audioChannelCounts
        self.byteCount = byteCount
    }
}
