import Foundation
import HeraldSandbox
import HeraldServices

/// One status posted through a configured Twitter-style, X API v2 or Mastodon service, optionally with an MP4 video
/// (validated locally, then sent with the chunked upload): what `herald post` does.
public struct SinglePost: Sendable {
    /// The configuration whose service is used.
    public var configuration: HeraldConfiguration
    /// The service's name; nil picks the only twitter service (else the only mastodon one).
    public var service: String?

    public init(configuration: HeraldConfiguration, service: String? = nil) {
        self.configuration = configuration
        self.service = service
    }

    /// One step of a video's upload, reported to ``post(_:media:inReplyTo:progress:stage:)``'s `progress`.
    public typealias Progress = UploadProgress

    /// The largest video, in bytes, that can be posted (``MediaLimits/twitterVideo``'s 15 MB): a larger file need
    /// not be read, it is refused anyway.
    public static var maxMediaBytes: Int { MediaLimits.twitterVideo.maxVideoBytes }

    /// What was posted.
    public struct Posted: Sendable, Hashable {
        /// The new status's id.
        public var statusID: String
        /// The service's name.
        public var service: String
        /// The embedded sandbox it went to, if any (gone when the process ends).
        public var sandboxURL: URL?
        /// The uploaded media's id, if any.
        public var mediaID: String?
    }

    /// How far a post has gone, reported as it goes: what is true when it is interrupted.
    public enum Stage: Sendable, Hashable {
        /// The video's chunked upload has begun (INIT sent); nothing is posted yet.
        case uploadingMedia
        /// The video is uploaded under this media id; no status refers to it yet.
        case mediaUploaded(String)
        /// The status request is sent: once it started, the status may exist even if no answer
        /// comes.
        case sendingStatus
    }

    /// The service to post through: a twitter service (v1.1 or X API v2) or a mastodon one.
    ///
    /// - Throws: ``DaemonError`` when there is none, several and no name, or the named one
    ///   cannot post statuses.
    public func serviceName() throws(DaemonError) -> String {
        let postable = ["twitter", "mastodon"]
        let names = { (kind: String) in configuration.services.keys.filter { configuration.services[$0]?.kind == kind }.sorted() }
        if let service {
            guard let kind = configuration.services[service]?.kind else {
                let candidates = postable.flatMap(names)
                throw DaemonError("no service named \"\(service)\" (services that post: \(candidates.joined(separator: ", ")))")
            }
            guard postable.contains(kind) else {
                throw DaemonError("service \"\(service)\" is a \(kind) service; posts go to a twitter or mastodon service")
            }
            return service
        }
        // The only twitter service, as before Mastodon existed; else the only mastodon service.
        for kind in postable {
            let found = names(kind)
            if found.count > 1 {
                throw DaemonError("several \(kind) services (\(found.joined(separator: ", "))); choose one with --service")
            }
            if let only = found.first { return only }
        }
        throw DaemonError("the configuration has no twitter or mastodon service to post to")
    }

    /// Posts `text` with `media` (the bytes of an MP4 file), reporting upload steps and stages;
    /// with `inReplyTo`, as a reply to that post (X API v2 `reply.in_reply_to_tweet_id`, v1.1
    /// `in_reply_to_status_id`, Mastodon `in_reply_to_id`).
    ///
    /// Cancelling the calling task stops the request in flight; the error then says it was
    /// cancelled, and the last ``Stage`` reported tells what had been done.
    ///
    /// - Throws: ``DaemonError`` with the service's or the validation's reason.
    public func post(_ text: String, media: Data? = nil, inReplyTo: String? = nil,
                     progress: @escaping @Sendable (Progress) -> Void = { _ in },
                     stage: @escaping @Sendable (Stage) -> Void = { _ in }) async throws(DaemonError) -> Posted {
        let name = try serviceName()
        var sandbox: Sandbox?
        if configuration.services[name]?.endpoint == .sandbox {
            do {
                sandbox = try await Sandbox.start(configuration.sandboxConfiguration())
            } catch {
                throw DaemonError("cannot start the sandbox: \(error)")
            }
        }
        do {
            if case .mastodon? = configuration.services[name] {
                let client = try ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport())
                    .mastodon(name, clock: ContinuousClock(), now: { Date() })
                let posted = try await Self.postMastodon(client, text, media: media, inReplyTo: inReplyTo, progress: progress, stage: stage)
                await sandbox?.stop()
                return Posted(statusID: posted.id, service: name, sandboxURL: sandbox?.baseURL, mediaID: posted.mediaID)
            }
            if case .x? = configuration.services[name] {
                let client = try ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport()).x(name)
                let posted = try await Self.postX(client, text, media: media, inReplyTo: inReplyTo, progress: progress, stage: stage)
                await sandbox?.stop()
                return Posted(statusID: posted.id, service: name, sandboxURL: sandbox?.baseURL, mediaID: posted.mediaID)
            }
            let client = try ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport()).twitter(name)
            var mediaIDs: [String] = []
            if let media {
                let uploaded = try await client.uploadMedia(media, mediaType: "video/mp4", category: "tweet_video") { step in
                    if step.phase == .initialized { stage(.uploadingMedia) }
                    progress(step)
                }
                mediaIDs = [uploaded.mediaID]
                stage(.mediaUploaded(uploaded.mediaID))
            }
            // Not begun when cancelled already: the stage would claim a request that is never sent.
            if Task.isCancelled { throw ServiceError.cancelled }
            stage(.sendingStatus)
            let status = try await client.update(status: text, inReplyTo: inReplyTo, mediaIDs: mediaIDs)
            await sandbox?.stop()
            return Posted(statusID: status.id, service: name, sandboxURL: sandbox?.baseURL, mediaID: mediaIDs.first)
        } catch {
            await sandbox?.stop()
            throw DaemonError("\(error)")
        }
    }
}
