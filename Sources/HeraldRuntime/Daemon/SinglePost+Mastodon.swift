import Foundation
import HeraldServices

extension SinglePost {
    /// `herald post` on a mastodon service: the video (checked locally as for the other
    /// services) through `POST /api/v2/media`, waited for until processed, then
    /// `POST /api/v1/statuses` with an `Idempotency-Key` made for this one post, so a retried
    /// request cannot make a second status.
    static func postMastodon(_ client: MastodonClient, _ text: String, media: Data?, inReplyTo: String?, progress: @escaping @Sendable (Progress) -> Void,
                             stage: @escaping @Sendable (Stage) -> Void) async throws -> (id: String, mediaID: String?) {
        var mediaIDs: [String] = []
        if let media {
            _ = try MediaLimits.twitterVideo.validate(video: media, mediaType: "video/mp4")
            stage(.uploadingMedia)
            let uploaded = try await client.uploadMedia(media, mediaType: "video/mp4", fileName: "video.mp4", progress: progress)
            mediaIDs = [uploaded.id]
            stage(.mediaUploaded(uploaded.id))
        }
        if Task.isCancelled { throw ServiceError.cancelled }
        stage(.sendingStatus)
        let status = try await client.postStatus(MastodonStatusDraft(status: text, mediaIDs: mediaIDs, inReplyToID: inReplyTo), idempotencyKey: "herald-post-\(UUID().uuidString)")
        return (status.id, mediaIDs.first)
    }
}
