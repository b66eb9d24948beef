/// Local limits checked before an upload starts, so a file the service would refuse is not
/// sent at all. The defaults are seed 002's video limits (MP4 only, at most 15 MB); later
/// service limits were larger, so they are configuration.
///
/// Only size and type are checked here: duration, dimensions, frame rate and audio
/// channels need the MP4 parsed, which this module does not do.
public struct MediaLimits: Sendable, Hashable {
    /// Largest video in bytes.
    public var maxVideoBytes: Int
    /// Accepted video MIME types.
    public var videoTypes: Set<String>
    /// Largest image in bytes.
    public var maxImageBytes: Int

    /// Creates limits.
    public init(maxVideoBytes: Int = 15 * 1024 * 1024, videoTypes: Set<String> = ["video/mp4"], maxImageBytes: Int = 5 * 1024 * 1024) {
        self.maxVideoBytes = maxVideoBytes
        self.videoTypes = videoTypes
        self.maxImageBytes = maxImageBytes
    }

    /// Seed 002's limits.
    public static let seed002 = MediaLimits()

    /// Throws `.invalidRequest` when `byteCount` bytes of `mediaType` exceed the limits.
    public func validate(byteCount: Int, mediaType: String) throws {
        let type = mediaType.lowercased()
        if type.hasPrefix("video/") {
            guard videoTypes.contains(type) else {
                throw ServiceError.invalidRequest("video type \(mediaType) is not one of \(videoTypes.sorted().joined(separator: ", "))")
            }
            guard byteCount <= maxVideoBytes else {
                throw ServiceError.invalidRequest("video of \(byteCount) bytes exceeds \(maxVideoBytes) bytes")
            }
        } else if byteCount > maxImageBytes {
            throw ServiceError.invalidRequest("media of \(byteCount) bytes exceeds \(maxImageBytes) bytes")
        }
    }
}
