import Foundation

/// Emulates a Mastodon server's REST API at its real paths: the instance (v1 and v2), home,
/// public, local, hashtag, list and account timelines with `max_id` / `since_id` / `min_id` /
/// `limit` and `Link` headers, posting with `Idempotency-Key` (kept an hour of the sandbox's
/// clock), media uploads processed over polls, bearer tokens, and the `X-RateLimit-*` headers.
/// Errors are `{"error": "…"}`, as the server writes them.
final class MastodonEmulator: Sendable {
    let configuration: SandboxConfiguration
    let start: Date
    let state = Locked(MastodonState())

    init(configuration: SandboxConfiguration) {
        self.configuration = configuration
        self.start = configuration.now()
        let start = self.start
        state.withLock { state in
            state.grow(now: start, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
        }
    }

    var settings: SandboxMastodonSettings { configuration.mastodon }

    /// Whether `path` is one of this emulator's.
    static func handles(_ path: String) -> Bool {
        path.hasPrefix("/api/v1/") || path.hasPrefix("/api/v2/") || path.hasPrefix("/system/media/")
    }

    static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> SandboxResponse {
        .json(status, .object([("error", .string(message))]), headers: headers)
    }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        var path = request.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        let origin = "http://" + (request.header("Host") ?? "127.0.0.1")
        if path.hasPrefix("/system/media/") { return mediaFile(String(path.dropFirst("/system/media/".count))) }
        let now = configuration.now()
        let (allowed, limitHeaders) = countRequest(now: now)
        guard allowed else { return Self.error(429, "Too many requests", headers: limitHeaders) }
        var response = route(request, path: path, origin: origin, now: now)
        response.headers += limitHeaders
        return response
    }

    /// Counts a request in the rate-limit window: whether it is allowed, and the headers.
    private func countRequest(now: Date) -> (Bool, [(name: String, value: String)]) {
        let limit = settings.rateLimit, window = settings.rateLimitWindow
        return state.withLock { state in
            if state.windowStart.map({ now >= $0.addingTimeInterval(window) }) ?? true {
                state.windowStart = now
                state.windowUsed = 0
            }
            let reset = (state.windowStart ?? now).addingTimeInterval(window)
            let allowed = state.windowUsed < limit
            if allowed { state.windowUsed += 1 }
            return (allowed, [("X-RateLimit-Limit", String(limit)), ("X-RateLimit-Remaining", String(max(0, limit - state.windowUsed))),
                              ("X-RateLimit-Reset", MastodonEncoding.iso(reset))])
        }
    }

    /// nil without an `Authorization` header; whether it holds the accepted bearer token.
    private func authorized(_ request: SandboxRequest) -> Bool? {
        guard let header = request.header("Authorization") else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && parts[0].lowercased() == "bearer" && parts[1] == settings.token
    }

    private func route(_ request: SandboxRequest, path: String, origin: String, now: Date) -> SandboxResponse {
        let auth = authorized(request)
        let invalid = Self.error(401, "The access token is invalid")
        // An invalid token is refused everywhere; a missing one only where a user is needed.
        if auth == false { return invalid }
        let signedIn = auth == true
        let segments = path.split(separator: "/").map(String.init)
        switch (request.method, segments.count > 2 ? Array(segments[2...]) : []) {
        case ("GET", ["instance"]):
            return .json(200, MastodonEncoding.instance(v2: segments[1] == "v2", origin: origin, settings: settings))
        case ("GET", ["accounts", "verify_credentials"]) where segments[1] == "v1":
            return signedIn ? .json(200, MastodonEncoding.account(MastodonFixtures.me, origin: origin)) : invalid
        case ("GET", ["timelines", "home"]) where segments[1] == "v1":
            return signedIn ? timeline(request, path: path, origin: origin, now: now) { _ in true } : invalid
        case ("GET", ["timelines", "public"]) where segments[1] == "v1":
            let local = request.query("local") == "true", remote = request.query("remote") == "true"
            return timeline(request, path: path, origin: origin, now: now) { status in
                status.visibility == "public" && (!local || status.author.isLocal) && (!remote || !status.author.isLocal)
            }
        case ("GET", let rest) where segments[1] == "v1" && rest.count == 3 && rest[0] == "timelines" && rest[1] == "tag":
            let tag = rest[2].lowercased()
            let known = state.withLock { state in state.statuses.contains { $0.tags.contains(tag) } } || tag == "herald"
            guard known else { return Self.error(404, "Record not found") }
            return timeline(request, path: path, origin: origin, now: now) { $0.visibility == "public" && $0.tags.contains(tag) }
        case ("GET", let rest) where segments[1] == "v1" && rest.count == 3 && rest[0] == "timelines" && rest[1] == "list":
            guard signedIn else { return invalid }
            guard settings.listIDs.contains(rest[2]) else { return Self.error(404, "Record not found") }
            let members = Set(MastodonFixtures.people.prefix(2).map(\.id))
            return timeline(request, path: path, origin: origin, now: now) { members.contains($0.author.id) }
        case ("GET", let rest) where segments[1] == "v1" && rest.count == 3 && rest[0] == "accounts" && rest[2] == "statuses":
            let id = rest[1]
            guard (MastodonFixtures.people + [MastodonFixtures.me]).contains(where: { $0.id == id }) else {
                return Self.error(404, "Record not found")
            }
            return timeline(request, path: path, origin: origin, now: now) { $0.author.id == id && $0.visibility == "public" }
        case ("POST", ["statuses"]) where segments[1] == "v1":
            return signedIn ? postStatus(request, origin: origin, now: now) : invalid
        case ("POST", ["media"]) where segments[1] == "v2" || segments[1] == "v1":
            return signedIn ? upload(request, origin: origin, synchronous: segments[1] == "v1") : invalid
        case ("GET", let rest) where segments[1] == "v1" && rest.count == 2 && rest[0] == "media":
            return signedIn ? poll(rest[1], origin: origin) : invalid
        default:
            return Self.error(404, "Record not found")
        }
    }

    /// A timeline page: newest first; `max_id` and `since_id` exclusive bounds, `min_id` the
    /// statuses immediately newer than it; `limit` 1…40 (20 by default); with a `Link` header
    /// naming the older (`next`, `max_id`) and newer (`prev`, `min_id`) pages when not empty.
    private func timeline(_ request: SandboxRequest, path: String, origin: String, now: Date,
                          where include: (MastodonState.StoredStatus) -> Bool) -> SandboxResponse {
        let limit = min(40, max(1, request.query("limit").flatMap { Int($0) } ?? 20))
        let maxID = request.query("max_id").flatMap(UInt64.init)
        let sinceID = request.query("since_id").flatMap(UInt64.init)
        let minID = request.query("min_id").flatMap(UInt64.init)
        let (page, media) = state.withLock { state -> ([MastodonState.StoredStatus], [String: MastodonState.Media]) in
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            let chosen = state.statuses.filter { status in
                include(status) && (maxID.map { status.id < $0 } ?? true) && (sinceID.map { status.id > $0 } ?? true)
                    && (minID.map { status.id > $0 } ?? true)
            }
            // Stored oldest first: min_id takes the oldest above it, the others the newest.
            let page = minID != nil ? Array(chosen.prefix(limit).reversed()) : Array(chosen.suffix(limit).reversed())
            return (page, state.media)
        }
        var headers: [(name: String, value: String)] = []
        if let newest = page.first, let oldest = page.last {
            var kept = request.queryItems.filter { !["max_id", "since_id", "min_id", "limit"].contains($0.0) }
            kept.append(("limit", String(limit)))
            let base = origin + path + "?" + kept.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
            headers.append(("Link", "<\(base)&max_id=\(oldest.id)>; rel=\"next\", <\(base)&min_id=\(newest.id)>; rel=\"prev\""))
        }
        let body = SandboxJSON.array(page.map { MastodonEncoding.status($0, media: $0.mediaIDs.compactMap { media[$0] }, origin: origin) })
        return .json(200, body, headers: headers)
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// What was posted through the API, oldest first.
    func posts() -> [SandboxMastodonPost] {
        state.withLock { state in
            state.statuses.filter(\.posted).map {
                SandboxMastodonPost(id: String($0.id), text: $0.text, visibility: $0.visibility, spoilerText: $0.spoiler,
                                    language: $0.language, mediaIDs: $0.mediaIDs,
                                    mediaDescriptions: $0.mediaIDs.map { state.media[$0]?.description ?? "" },
                                    idempotencyKey: $0.idempotencyKey, inReplyToID: $0.inReplyTo)
            }
        }
    }
}

/// A status posted to the sandbox's Mastodon emulator, as recorded for tests and users.
public struct SandboxMastodonPost: Sendable, Hashable, Codable {
    /// The new status's id.
    public var id: String
    /// The text as received.
    public var text: String
    /// Its visibility.
    public var visibility: String
    /// Its content warning (empty when none).
    public var spoilerText: String
    /// Its language, if given.
    public var language: String?
    /// The attached media's ids.
    public var mediaIDs: [String]
    /// The attached media's descriptions (alt texts), in order.
    public var mediaDescriptions: [String]
    /// The `Idempotency-Key` it was posted with, if any.
    public var idempotencyKey: String?
    /// The status it replies to (`in_reply_to_id`), if any.
    public var inReplyToID: String?
}
