import Foundation
import HeraldServices

extension SinglePost {
    /// `herald post` on an `"api": "v2"` service: the video through the v2 chunked upload
    /// (checked locally first), then `POST /2/tweets`, reporting the same steps and stages.
    static func postX(_ client: XClient, _ text: String, media: Data?, inReplyTo: String?, progress: @escaping @Sendable (Progress) -> Void,
                      stage: @escaping @Sendable (Stage) -> Void) async throws -> (id: String, mediaID: String?) {
        var mediaIDs: [String] = []
        if let media {
            let uploaded = try await client.uploadMedia(media, mediaType: "video/mp4", category: "tweet_video") { step in
                if step.phase == .initialized { stage(.uploadingMedia) }
                progress(step)
            }
            mediaIDs = [uploaded.mediaID]
            stage(.mediaUploaded(uploaded.mediaID))
        }
        if Task.isCancelled { throw ServiceError.cancelled }
        stage(.sendingStatus)
        let post = try await client.createPost(text: text, mediaIDs: mediaIDs, inReplyTo: inReplyTo)
        return (post.id, mediaIDs.first)
    }
}
