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

/// Which media files a ``TwitterPostService`` may read.
public enum MediaAccess: Sendable, Hashable {
    /// Any file (one daemon alone: its own rules, from its own config, name the files).
    case anywhere
    /// Only files inside this directory, once symbolic links and `..` are resolved (a cluster
    /// node: an intent taken from the post queue names a path another node rendered).
    case within(URL)
    /// No media at all (a cluster node without `cluster.mediaDirectory`).
    case none
}

/// Statuses (with an optional MP4 video) on a Twitter-style service. Its "duplicate status"
/// answer (403, code 187) makes a repeated post harmless; the scheduler counts it as sent.
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

    /// Where media files are read: a thread of their own, so a slow disk delays no task.
    static let mediaIO = BlockingIOThread(name: "herald.media-io")

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
                // Up to the service's limit (15 MB) read on a thread of its own, not the pool.
                data = try await Self.mediaIO.run { [mediaAccess] in try Data(contentsOf: try Self.permitted(url, media, mediaAccess)) }
            } catch let error as PostServiceError {
                throw error
            } catch {
                throw PostServiceError("media \(media) cannot be read: \((error as NSError).localizedDescription)")
            }
            let uploaded = try await client.uploadMedia(data, mediaType: "video/mp4", category: "tweet_video", progress: progress)
            mediaIDs = [uploaded.mediaID]
        }
        return try await client.update(status: text, mediaIDs: mediaIDs).id
    }

    /// The file to read for `url` (written `media`), its links resolved, if `access` allows it.
    /// Runs on the media thread: resolving links reads the file system.
    static func permitted(_ url: URL, _ media: String, _ access: MediaAccess) throws -> URL {
        switch access {
        case .anywhere:
            return url
        case .none:
            throw PostServiceError("media \(media): this node posts no media (set cluster.mediaDirectory to the directory media may come from)")
        case .within(let directory):
            let root = directory.resolvingSymlinksInPath().standardizedFileURL.path
            let file = url.resolvingSymlinksInPath().standardizedFileURL
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard file.path.hasPrefix(prefix) else {
                throw PostServiceError("media \(media) is outside cluster.mediaDirectory (\(directory.path)): refused")
            }
            return file
        }
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
