import Foundation

/// How the sandbox's Mastodon emulator behaves: the token it accepts, its rate limit, how long
/// it keeps idempotency keys, and how media is processed.
public struct SandboxMastodonSettings: Sendable, Hashable {
    /// The bearer token accepted (`Authorization: Bearer …`).
    public var token: String
    /// Requests allowed per ``rateLimitWindow`` for the token (the documented 300 per 5 minutes).
    public var rateLimit: Int
    /// The rate-limit window in seconds.
    public var rateLimitWindow: TimeInterval
    /// How long an `Idempotency-Key` is kept, in seconds of the sandbox's clock (an hour, as documented).
    public var idempotencyWindow: TimeInterval
    /// `GET /api/v1/media/:id` polls before a video or audio upload is processed (images are
    /// processed at once); nil: never (to exercise a media that never finishes).
    public var mediaPolls: Int?
    /// The lists that exist, by id (`/api/v1/timelines/list/:id`; others are 404).
    public var listIDs: [String]
    /// The most characters a status may have (422 beyond).
    public var characterLimit: Int

    /// The defaults: token `sandbox-mastodon-token`, 300 requests per 300 s, keys kept 3600 s,
    /// media processed after 2 polls, list `1`, 500 characters.
    public init(token: String = SandboxMastodonSettings.standardToken, rateLimit: Int = 300, rateLimitWindow: TimeInterval = 300,
                idempotencyWindow: TimeInterval = 3600, mediaPolls: Int? = 2, listIDs: [String] = ["1"], characterLimit: Int = 500) {
        self.token = token
        self.rateLimit = rateLimit
        self.rateLimitWindow = rateLimitWindow
        self.idempotencyWindow = idempotencyWindow
        self.mediaPolls = mediaPolls
        self.listIDs = listIDs
        self.characterLimit = characterLimit
    }

    /// The token the sandbox accepts by default.
    public static let standardToken = "sandbox-mastodon-token"
}
