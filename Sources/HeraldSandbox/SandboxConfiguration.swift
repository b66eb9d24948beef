import Foundation

/// Everything the sandbox needs to start: port, credentials, the timeline's pace, limits and
/// faults. Time comes from ``now`` so tests control it instead of sleeping.
public struct SandboxConfiguration: Sendable {
    /// The TCP port on 127.0.0.1; 0 picks a free one.
    public var port: Int
    /// The OAuth credentials accepted on Twitter-style requests.
    public var credentials: SandboxCredentials
    /// The screen name of the signed-in user (the author of posts).
    public var screenName: String
    /// The BaaS tenant id served under `/1/{tenant}/`.
    public var baasTenant: String
    /// The BaaS `X-Application-Id` required.
    public var baasApplicationID: String
    /// The BaaS `X-Application-Key` required.
    public var baasApplicationKey: String
    /// Statuses in the timeline at start.
    public var initialStatusCount: Int
    /// A new status appears every this many seconds of ``now``.
    public var statusInterval: TimeInterval
    /// Home timeline requests allowed per window.
    public var homeTimelineLimit: Int
    /// The rate-limit window in seconds.
    public var rateLimitWindow: TimeInterval
    /// Posts allowed per day before 403 / 185.
    public var dailyUpdateLimit: Int
    /// Largest media upload accepted, in bytes.
    public var maxMediaBytes: Int
    /// Largest APPEND segment accepted, in bytes.
    public var maxSegmentBytes: Int
    /// `check_after_secs` reported while a video is processing.
    public var processingCheckAfterSeconds: Int
    /// STATUS polls before processing finishes.
    public var processingPolls: Int
    /// Whether video processing ends in `failed` (to exercise that path).
    public var processingFails: Bool
    /// When set, an `oauth_timestamp` further than this many seconds from ``now`` is refused
    /// with 401 / 135, as the real service does; nil (the default) accepts any timestamp, so
    /// tests on virtual time can sign with the wall clock.
    public var oauthTimestampTolerance: TimeInterval?
    /// When set, the sandbox adds a todo (`{"description": "…", "done": false}`, English and
    /// Japanese texts in turn) to ``todoBucket`` of ``baasTenant`` every this many seconds of
    /// ``now``, so a daemon watching todos sees new ones; nil (the default) leaves buckets to
    /// the clients. Like the timeline, the bucket grows when a request looks at it.
    public var todoInterval: TimeInterval?
    /// The bucket ``todoInterval`` grows.
    public var todoBucket: String
    /// The OAuth 2.0 user access token accepted (`Authorization: Bearer …`) on X API v2 paths,
    /// besides OAuth 1.0a user context with ``credentials``.
    public var oauth2UserToken: String = "sandbox-oauth2-user-token"
    /// Fault injection.
    public var faults: SandboxFaults
    /// The time source; the timeline, rate limits and BaaS dates follow it.
    public var now: @Sendable () -> Date
    /// The Mastodon emulator's settings (token, limits, media processing).
    public var mastodon = SandboxMastodonSettings()
    /// Items in each feed (`/feeds/…`) at start.
    public var initialFeedItems = 5
    /// A new item appears in every feed every this many seconds of ``now``.
    public var feedInterval: TimeInterval = 5
    /// The key (the decoded part of a `whsec_…` secret) the webhook receiver
    /// (`/_sandbox/webhooks`) verifies signatures with; nil accepts deliveries unverified.
    public var webhookSecret: [UInt8]?

    /// Creates a configuration with sandbox defaults.
    public init(
        port: Int = 0, credentials: SandboxCredentials = .standard, screenName: String = "herald_sandbox",
        baasTenant: String = "sandbox-tenant", baasApplicationID: String = "sandbox-app-id",
        baasApplicationKey: String = "sandbox-app-key", initialStatusCount: Int = 30,
        statusInterval: TimeInterval = 5, homeTimelineLimit: Int = 15, rateLimitWindow: TimeInterval = 900,
        dailyUpdateLimit: Int = 2400, maxMediaBytes: Int = 15 * 1024 * 1024, maxSegmentBytes: Int = 5 * 1024 * 1024,
        processingCheckAfterSeconds: Int = 1, processingPolls: Int = 2, processingFails: Bool = false,
        oauthTimestampTolerance: TimeInterval? = nil, todoInterval: TimeInterval? = nil, todoBucket: String = "todos",
        faults: SandboxFaults = .none, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.port = port
        self.credentials = credentials
        self.screenName = screenName
        self.baasTenant = baasTenant
        self.baasApplicationID = baasApplicationID
        self.baasApplicationKey = baasApplicationKey
        self.initialStatusCount = initialStatusCount
        self.statusInterval = statusInterval
        self.homeTimelineLimit = homeTimelineLimit
        self.rateLimitWindow = rateLimitWindow
        self.dailyUpdateLimit = dailyUpdateLimit
        self.maxMediaBytes = maxMediaBytes
        self.maxSegmentBytes = maxSegmentBytes
        self.processingCheckAfterSeconds = processingCheckAfterSeconds
        self.processingPolls = processingPolls
        self.processingFails = processingFails
        self.oauthTimestampTolerance = oauthTimestampTolerance
        self.todoInterval = todoInterval
        self.todoBucket = todoBucket
        self.faults = faults
        self.now = now
    }
}
