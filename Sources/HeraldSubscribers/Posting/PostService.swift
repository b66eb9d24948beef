import Foundation
import HeraldServices
import HeraldSync

/// Where a ``PostScheduler`` sends an intent: a Twitter-style service or a BaaS bucket.
public protocol PostService: Sendable {
    /// Makes the post.
    ///
    /// - Parameters:
    ///   - intent: what to post.
    ///   - mayExist: the post may already have been made (an earlier attempt's answer was lost,
    ///     or a run crashed after sending); a service without its own duplicate detection
    ///     looks for it first.
    ///   - progress: media upload steps.
    /// - Returns: the new status's or object's id.
    /// - Throws: ``ServiceError`` (classified by the scheduler) or ``PostServiceError``.
    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String
}

/// A post that cannot be made as asked, whatever the retries (a missing media file, the
/// wrong kind of content for the service).
public struct PostServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// Statuses (with an optional MP4 video) on a Twitter-style service. Its "duplicate status"
/// answer (403, code 187) makes a repeated post harmless; the scheduler counts it as sent. A
/// rule's `inReplyTo` becomes the form's `in_reply_to_status_id`.
public struct TwitterPostService: PostService {
    /// The client.
    public var client: TwitterClient
    /// Relative media paths are resolved against this directory.
    public var baseDirectory: URL
    /// Which media files may be read.
    public var mediaAccess: MediaAccess

    public init(client: TwitterClient, baseDirectory: URL, mediaAccess: MediaAccess = .anywhere) {
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
        return try await client.update(status: text, inReplyTo: reply, mediaIDs: mediaIDs).id
    }
}

/// Objects created in a BaaS bucket. The service has no duplicate detection, so each object
/// carries the intent's key in a ``keyField`` field, and a retry that may repeat a post first
/// looks for an object with that key.
public struct BaaSPostService: PostService {
    /// The field holding the idempotency key.
    public static let keyField = "heraldKey"
    /// The client.
    public var client: BaaSClient

    public init(client: BaaSClient) {
        self.client = client
    }

    public func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        guard case .object(let bucket, var fields) = intent.content else {
            throw PostServiceError("service \"\(intent.service)\" creates BaaS objects, not statuses")
        }
        if mayExist {
            let found = try await client.query(bucket: bucket, BaaSQuery(conditions: [Self.keyField: .string(intent.key)], limit: 1))
            if let existing = found.results.first { return existing.id }
        }
        fields[Self.keyField] = .string(intent.key)
        return try await client.create(bucket: bucket, fields: fields).id
    }
}

/// How the scheduler treats an error of a post.
package enum PostErrorClass: Equatable {
    /// The service already has it (Twitter's 187): counts as sent.
    case duplicate
    /// Wait until the date (a rate-limit reset), then try again; not counted as an attempt.
    case rateLimited(until: Date?)
    /// Try again after a backoff (5xx, network, a lost or unreadable answer).
    case retry(String)
    /// Give up (4xx other than 429 and 187, a bad media file).
    case permanent(String, status: Int?)
    /// The scheduler is stopping.
    case cancelled

    package init(_ error: any Error) {
        if error is CancellationError {
            self = .cancelled
            return
        }
        if let failure = error as? PostServiceError {
            self = .permanent(failure.reason, status: nil)
            return
        }
        guard let error = error as? ServiceError else {
            self = .retry("\(error)")
            return
        }
        switch error.kind {
        case .cancelled: self = .cancelled
        case .rateLimited: self = .rateLimited(until: error.rateLimit?.reset)
        case .transport, .timeout, .decoding: self = .retry(error.description)
        case .invalidRequest, .processingFailed: self = .permanent(error.description, status: error.status)
        case .httpStatus:
            let status = error.status ?? 0
            if error.hasAPIError(code: 187) {
                self = .duplicate
            } else if status >= 500 || status == 408 {
                self = .retry(error.description)
            } else {
                self = .permanent(error.description, status: error.status)
            }
        }
    }
}
