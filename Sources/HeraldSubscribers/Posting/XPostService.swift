import Foundation
import HeraldServices

/// Posts (with an optional MP4 video) on X API v2: `POST /2/tweets`, the video through the v2
/// chunked upload. The service's "duplicate content" refusal (403) arrives as code 187, like
/// v1.1's "duplicate status", so the scheduler counts it as sent when the post may have been
/// made before. A rule's `inReplyTo` becomes the body's `reply.in_reply_to_tweet_id`.
public struct XPostService: PostService {
    /// The client.
    public var client: XClient
    /// Relative media paths are resolved against this directory.
    public var baseDirectory: URL
    /// Which media files may be read.
    public var mediaAccess: MediaAccess

    public init(client: XClient, baseDirectory: URL, mediaAccess: MediaAccess = .anywhere) {
        self.client = client
        self.baseDirectory = baseDirectory
        self.mediaAccess = mediaAccess
    }

    public func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        guard case .status(let text, let media, let inReplyTo) = intent.content else {
            throw PostServiceError("service \"\(intent.service)\" posts statuses, not BaaS objects")
        }
        let reply = try ReplyID.x(inReplyTo)
        var mediaIDs: [String] = []
        if let media {
            let data = try await MediaFile.readVideo(media, baseDirectory: baseDirectory, access: mediaAccess)
            let uploaded = try await client.uploadMedia(data, mediaType: "video/mp4", category: "tweet_video", progress: progress)
            mediaIDs = [uploaded.mediaID]
        }
        return try await client.createPost(text: text, mediaIDs: mediaIDs, inReplyTo: reply).id
    }
}
