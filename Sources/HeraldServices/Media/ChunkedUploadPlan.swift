import Foundation

/// What both chunked uploads (v1.1 and X API v2) check before they send anything: bytes to
/// send, within the media limits (an MP4 parsed and checked whole, so a file the service would
/// refuse sends nothing), a segment size of 1 byte…5 MB and at most 1,000 segments
/// (`segment_index` runs 0…999: refused before sending rather than failed at segment 1000).
enum ChunkedUploadPlan {
    /// The number of segments `data` is sent in.
    static func segments(for data: Data, mediaType: String, limits: MediaLimits?, segmentSize: Int) throws -> Int {
        guard !data.isEmpty else { throw ServiceError.invalidRequest("no media bytes to upload") }
        if let limits {
            if mediaType.lowercased() == "video/mp4" {
                _ = try limits.validate(video: data, mediaType: mediaType)
            } else {
                try limits.validate(byteCount: data.count, mediaType: mediaType)
            }
        }
        guard (1...TwitterClient.maxSegmentSize).contains(segmentSize) else {
            throw ServiceError.invalidRequest("segment size \(segmentSize) is outside 1…\(TwitterClient.maxSegmentSize) bytes")
        }
        let segments = (data.count + segmentSize - 1) / segmentSize
        guard segments <= TwitterClient.maxSegmentCount else {
            throw ServiceError.invalidRequest(
                "\(segments) segments of \(segmentSize) bytes exceed the service's \(TwitterClient.maxSegmentCount); use larger segments")
        }
        return segments
    }
}
