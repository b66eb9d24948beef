import Foundation
import HeraldServices

/// Posts (with an optional MP4 video) on X API v2: `POST /2/tweets`, the video through the v2
/// chunked upload. The service's "duplicate content" refusal (403) arrives as code 187, like
/// v1.1's "duplicate status", so the scheduler counts it as sent when the post may have been
/// made before.
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
        guard case .status(let text, let media) = intent.content else {
            throw PostServiceError("service \"\(intent.service)\" posts statuses, not BaaS objects")
        }
        var mediaIDs: [String] = []
        if let media {
            let url = media.hasPrefix("/") ? URL(fileURLWithPath: media) : baseDirectory.appendingPathComponent(media)
            guard url.pathExtension.lowercased() == "mp4" else {
                throw PostServiceError("media \(media): only MP4 videos are posted (the file's name must end in .mp4)")
            }
            let data: Data
            do {
                // Read on the media thread, never on the cooperative pool.
                data = try await TwitterPostService.mediaIO.run { [mediaAccess] in
                    try Data(contentsOf: try TwitterPostService.permitted(url, media, mediaAccess))
                }
            } catch let error as PostServiceError {
                throw error
            } catch {
                throw PostServiceError("media \(media) cannot be read: \((error as NSError).localizedDescription)")
            }
            let uploaded = try await client.uploadMedia(data, mediaType: "video/mp4", category: "tweet_video", progress: progress)
            mediaIDs = [uploaded.mediaID]
        }
        return try await client.createPost(text: text, mediaIDs: mediaIDs).id
    }
}
