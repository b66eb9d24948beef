import Foundation

/// Local limits checked before an upload starts, so a file the service would refuse is not
/// sent at all. The defaults are Twitter's video limits for the v1.1 chunked upload
/// (``twitterVideo``): MP4 only, at most 15 MB, 0.5–30 s, 32×32 to 1280×1024, aspect ratio
/// 1:3 to 3:1, at most 40 fps, mono or stereo audio. Later service limits were larger, so
/// every one is configuration.
///
/// ``validate(byteCount:mediaType:)`` checks size and type only; ``validate(video:mediaType:)``
/// also parses the MP4 with ``MP4Inspector`` and checks duration, dimensions, aspect ratio,
/// frame rate and audio channels. Every failure is `ServiceError.invalidRequest` naming the
/// limit and the actual value.
public struct MediaLimits: Sendable, Hashable {
    /// Largest video in bytes.
    public var maxVideoBytes: Int
    /// Accepted video MIME types.
    public var videoTypes: Set<String>
    /// Largest image in bytes.
    public var maxImageBytes: Int
    /// Shortest and longest video, in seconds, both accepted.
    public var videoDuration: ClosedRange<Double>
    /// Narrowest video in pixels, accepted.
    public var minVideoWidth: Int
    /// Shortest video frame in pixels, accepted.
    public var minVideoHeight: Int
    /// Widest video in pixels, accepted.
    public var maxVideoWidth: Int
    /// Tallest video frame in pixels, accepted.
    public var maxVideoHeight: Int
    /// Narrowest and widest width-to-height ratio, both accepted.
    public var videoAspectRatio: ClosedRange<Double>
    /// Highest video frame rate in frames per second, accepted.
    public var maxVideoFrameRate: Double
    /// Most channels an audio track may have (2: mono or stereo).
    public var maxAudioChannels: Int

    /// Creates limits; each default is ``twitterVideo``'s.
    public init(
        maxVideoBytes: Int = 15 * 1024 * 1024, videoTypes: Set<String> = ["video/mp4"], maxImageBytes: Int = 5 * 1024 * 1024,
        videoDuration: ClosedRange<Double> = 0.5...30, minVideoWidth: Int = 32, minVideoHeight: Int = 32,
        maxVideoWidth: Int = 1280, maxVideoHeight: Int = 1024, videoAspectRatio: ClosedRange<Double> = (1.0 / 3.0)...3.0,
        maxVideoFrameRate: Double = 40, maxAudioChannels: Int = 2
    ) {
        self.maxVideoBytes = maxVideoBytes
        self.videoTypes = videoTypes
        self.maxImageBytes = maxImageBytes
        self.videoDuration = videoDuration
        self.minVideoWidth = minVideoWidth
        self.minVideoHeight = minVideoHeight
        self.maxVideoWidth = maxVideoWidth
        self.maxVideoHeight = maxVideoHeight
        self.videoAspectRatio = videoAspectRatio
        self.maxVideoFrameRate = maxVideoFrameRate
        self.maxAudioChannels = maxAudioChannels
    }

    /// Twitter's video limits for the v1.1 chunked upload: MP4, 15 MB, 0.5–30 s, up to
    /// 1280×1024 at 40 fps (the defaults).
    public static let twitterVideo = MediaLimits()

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

    /// Checks an MP4 video's type and size, parses it, and checks what the parse found.
    ///
    /// - Returns: the parsed summary.
    /// - Throws: `.invalidRequest` for a type or size outside the limits, bytes that are not a
    ///   readable MP4 (the ``MP4Error`` message), or a summary outside the limits (see
    ///   ``validate(_:)``).
    @discardableResult
    public func validate(video data: Data, mediaType: String = "video/mp4") throws -> MP4Info {
        try validate(byteCount: data.count, mediaType: mediaType)
        let info: MP4Info
        do {
            info = try MP4Inspector.inspect(data)
        } catch let error as MP4Error {
            throw ServiceError.invalidRequest("video is not a readable MP4: \(error.message)")
        }
        try validate(info)
        return info
    }

    /// Checks a parsed video against the limits, in this order: bytes, duration, dimensions,
    /// aspect ratio, frame rate, audio channels.
    ///
    /// - Throws: `.invalidRequest` naming the first limit broken and the actual value, e.g.
    ///   `video is 31.2 s long; the limit is 0.5–30 s`.
    public func validate(_ info: MP4Info) throws {
        guard info.byteCount <= maxVideoBytes else {
            throw ServiceError.invalidRequest("video of \(info.byteCount) bytes exceeds \(maxVideoBytes) bytes")
        }
        guard videoDuration.contains(info.duration) else {
            throw ServiceError.invalidRequest(
                "video is \(Self.text(info.duration, beside: [videoDuration.lowerBound, videoDuration.upperBound])) s long; "
                    + "the limit is \(Self.text(videoDuration.lowerBound))–\(Self.text(videoDuration.upperBound)) s")
        }
        let size = "\(Self.text(info.width))×\(Self.text(info.height))"
        guard info.width >= Double(minVideoWidth), info.height >= Double(minVideoHeight),
            info.width <= Double(maxVideoWidth), info.height <= Double(maxVideoHeight)
        else {
            throw ServiceError.invalidRequest(
                "video is \(size); the limit is \(minVideoWidth)×\(minVideoHeight) to \(maxVideoWidth)×\(maxVideoHeight)")
        }
        let ratio = info.width / info.height  // height >= minVideoHeight, so > 0 unless that limit is 0
        guard videoAspectRatio.contains(ratio) else {
            throw ServiceError.invalidRequest(
                "video is \(size), aspect ratio \(Self.ratioText(ratio)); the limit is "
                    + "\(Self.ratioText(videoAspectRatio.lowerBound)) to \(Self.ratioText(videoAspectRatio.upperBound))")
        }
        guard info.frameRate <= maxVideoFrameRate else {
            throw ServiceError.invalidRequest(
                "video is \(Self.text(info.frameRate, beside: [maxVideoFrameRate])) fps; the limit is \(Self.text(maxVideoFrameRate)) fps")
        }
        if let channels = info.audioChannelCounts.first(where: { $0 > maxAudioChannels }) {
            throw ServiceError.invalidRequest("audio has \(channels) channels; the limit is \(maxAudioChannels)")
        }
    }

    /// `value` with at most three decimals and no trailing zeros, unless that would print the
    /// same as one of `limits` it differs from: then every digit, so a message never reads
    /// "30 s long; the limit is 0.5–30 s".
    private static func text(_ value: Double, beside limits: [Double] = []) -> String {
        let short = text(value, decimals: 3)
        if limits.contains(where: { $0 != value && text($0, decimals: 3) == short }) { return "\(value)" }
        return short
    }

    private static func text(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var result = String(format: "%.\(decimals)f", value)
        while result.contains("."), result.hasSuffix("0") { result.removeLast() }
        if result.hasSuffix(".") { result.removeLast() }
        return result
    }

    /// A ratio as `3:1` or `1:3`.
    private static func ratioText(_ ratio: Double) -> String {
        ratio >= 1 || ratio <= 0 ? "\(text(ratio)):1" : "1:\(text(1 / ratio))"
    }
}
