import Foundation
import HeraldServices

/// Statuses on a Mastodon server (`POST /api/v1/statuses`), with optional media uploaded
/// through `POST /api/v2/media` and waited for until processed, and a rule's `inReplyTo` as
/// `in_reply_to_id`.
///
/// Each status carries the intent's idempotency key as `Idempotency-Key`: a retry, or an intent
/// sent again after a crash, within the hour the server keeps keys, gets the status made the
/// first time instead of a second one. Beyond that hour the outbox alone decides (a key already
/// done is never sent again). Media is uploaded again on such a retry (the server drops
/// unattached media); only the status is idempotent.
public struct MastodonPostService: PostService {
    /// The client.
    public var client: MastodonClient
    /// Relative media paths are resolved against this directory.
    public var baseDirectory: URL
    /// Which media files may be read.
    public var mediaAccess: MediaAccess
    /// The largest media file read, in bytes (Mastodon's own limits are smaller: 16 MB for
    /// images, 99 MB for videos by default).
    public static let maxMediaBytes = 100 * 1024 * 1024

    public init(client: MastodonClient, baseDirectory: URL, mediaAccess: MediaAccess = .anywhere) {
        self.client = client
        self.baseDirectory = baseDirectory
        self.mediaAccess = mediaAccess
    }

    public func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        let content: MastodonPostContent
        switch intent.content {
        case .mastodonStatus(let made): content = made
        case .status(let text, let media, let inReplyTo): content = MastodonPostContent(text: text, media: media, inReplyTo: inReplyTo)
        case .object, .webhook: throw PostServiceError("service \"\(intent.service)\" posts statuses, not BaaS objects or webhook bodies")
        }
        let reply = try ReplyID.mastodon(content.inReplyTo)
        var mediaIDs: [String] = []
        if let media = content.media {
            let url = MediaFile.url(media, baseDirectory: baseDirectory)
            guard let mediaType = MastodonClient.mediaType(forExtension: url.pathExtension) else {
                throw PostServiceError("media \(media): not an image, video or audio file Mastodon takes (jpg, png, gif, webp, mp4, webm, mov, mp3, ogg, …)")
            }
            let data = try await MediaFile.read(media, baseDirectory: baseDirectory, access: mediaAccess, maxBytes: Self.maxMediaBytes)
            let uploaded = try await client.uploadMedia(data, mediaType: mediaType, fileName: url.lastPathComponent,
                                                        description: content.description, progress: progress)
            mediaIDs = [uploaded.id]
        }
        let draft = MastodonStatusDraft(status: content.text, visibility: content.visibility, spoilerText: content.spoiler,
                                        language: content.language, mediaIDs: mediaIDs, inReplyToID: reply)
        return try await client.postStatus(draft, idempotencyKey: intent.key).id
    }
}
