import Foundation

/// Emulates the Twitter-style endpoints: home and user timelines (JSON and XML), status
/// updates and chunked media upload, with OAuth checks, the home rate limit and duplicates.
final class TwitterEmulator: Sendable {
    let configuration: SandboxConfiguration
    let start: Date
    private let verifier: OAuthVerifier
    let state = Locked(TwitterState())

    init(configuration: SandboxConfiguration) {
        self.configuration = configuration
        self.start = configuration.now()
        self.verifier = OAuthVerifier(
            credentials: configuration.credentials, timestampTolerance: configuration.oauthTimestampTolerance, now: configuration.now)
        let start = self.start
        state.withLock { state in
            state.grow(now: start, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
        }
    }

    var me: TimelineFixtures.Person {
        TimelineFixtures.Person(id: 1, name: "Herald Sandbox", screenName: configuration.screenName)
    }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        switch verifier.verify(request) {
        case .valid: break
        case .badAuthenticationData: return .twitterError(400, code: 215, "Bad Authentication data.")
        case .invalidToken: return .twitterError(401, code: 89, "Invalid or expired token.")
        case .couldNotAuthenticate: return .twitterError(401, code: 32, "Could not authenticate you.")
        case .timestampOutOfBounds: return .twitterError(401, code: 135, "Timestamp out of bounds.")
        }
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/1.1/statuses/home_timeline.json"): return homeTimeline(request, xml: false)
        case ("GET", "/1.1/statuses/home_timeline.xml"): return homeTimeline(request, xml: true)
        case ("GET", "/1.1/statuses/user_timeline.json"): return userTimeline(request, xml: false)
        case ("GET", "/1.1/statuses/user_timeline.xml"): return userTimeline(request, xml: true)
        case ("POST", "/1.1/statuses/update.json"): return update(request)
        case (_, "/1.1/media/upload.json"): return MediaUploadEndpoint(emulator: self).handle(request)
        default: return .twitterError(404, code: 34, "Sorry, that page does not exist.")
        }
    }

    private func homeTimeline(_ request: SandboxRequest, xml: Bool) -> SandboxResponse {
        let now = configuration.now()
        let limit = configuration.homeTimelineLimit
        let window = configuration.rateLimitWindow
        let outcome = state.withLock { state -> (allowed: Bool, remaining: Int, reset: Date, page: [TwitterState.StoredStatus]) in
            if state.windowStart.map({ now >= $0.addingTimeInterval(window) }) ?? true {
                state.windowStart = now
                state.windowUsed = 0
            }
            let reset = (state.windowStart ?? now).addingTimeInterval(window)
            guard state.windowUsed < limit else { return (false, 0, reset, []) }
            state.windowUsed += 1
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            return (true, limit - state.windowUsed, reset, Self.select(state.statuses, request))
        }
        let headers: [(name: String, value: String)] = [
            ("x-rate-limit-limit", String(limit)), ("x-rate-limit-remaining", String(outcome.remaining)),
            ("x-rate-limit-reset", String(Int(outcome.reset.timeIntervalSince1970.rounded(.up)))),
        ]
        guard outcome.allowed else { return .twitterError(429, code: 88, "Rate limit exceeded", headers: headers) }
        return render(outcome.page, xml: xml, trimUser: request.query("trim_user") == "true", headers: headers)
    }

    private func userTimeline(_ request: SandboxRequest, xml: Bool) -> SandboxResponse {
        let now = configuration.now()
        let name = request.query("screen_name")?.lowercased()
        let id = request.query("user_id").flatMap(UInt64.init)
        guard name != nil || id != nil else { return .twitterError(400, code: 215, "Bad Authentication data.") }
        let known = TimelineFixtures.people + [me]
        guard known.contains(where: { $0.screenName.lowercased() == name || $0.id == id }) else {
            return .twitterError(404, code: 34, "Sorry, that page does not exist.")
        }
        let page = state.withLock { state in
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            let mine = state.statuses.filter { $0.author.screenName.lowercased() == name || $0.author.id == id }
            return Self.select(mine, request)
        }
        return render(page, xml: xml, trimUser: request.query("trim_user") == "true", headers: [])
    }

    /// Newest first; `since_id` exclusive, `max_id` inclusive, `count` 1…200 (default 20).
    /// As on the real service, `count` is applied before `exclude_replies` removes replies.
    static func select(_ statuses: [TwitterState.StoredStatus], _ request: SandboxRequest) -> [TwitterState.StoredStatus] {
        let count = min(200, max(1, request.query("count").flatMap { Int($0) } ?? 20))
        let since = request.query("since_id").flatMap(UInt64.init)
        let maxID = request.query("max_id").flatMap(UInt64.init)
        let chosen = statuses.reversed().filter { status in
            (since.map { status.id > $0 } ?? true) && (maxID.map { status.id <= $0 } ?? true)
        }
        let page = chosen.prefix(count)
        if request.query("exclude_replies") == "true" { return page.filter { $0.inReplyTo == nil } }
        return Array(page)
    }

    private func render(_ page: [TwitterState.StoredStatus], xml: Bool, trimUser: Bool = false, headers: [(name: String, value: String)]) -> SandboxResponse {
        if xml {
            return SandboxResponse(
                status: 200, headers: [("Content-Type", "application/xml; charset=utf-8")] + headers,
                body: Data(TwitterEncoding.xml(page, trimUser: trimUser).utf8))
        }
        return .json(200, .array(page.map { TwitterEncoding.json($0, trimUser: trimUser) }), headers: headers)
    }

    private func update(_ request: SandboxRequest) -> SandboxResponse {
        let form = request.formItems
        guard let text = form.first(where: { $0.0 == "status" })?.1, !text.isEmpty else {
            return .twitterError(400, code: 170, "Missing required parameter: status.")
        }
        guard text.count <= 280 else { return .twitterError(403, code: 186, "Tweet needs to be a bit shorter.") }
        let reply = form.first { $0.0 == "in_reply_to_status_id" }.flatMap { UInt64($0.1) }
        let mediaIDs = form.first { $0.0 == "media_ids" }.map {
            $0.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } ?? []
        let now = configuration.now()
        let author = me
        let dailyLimit = configuration.dailyUpdateLimit
        return state.withLock { state -> SandboxResponse in
            // Statuses due before now take their ids first, so ids follow time.
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            let mine = state.statuses.filter(\.posted)
            if mine.contains(where: { $0.text == text }) {
                return .twitterError(403, code: 187, "Status is a duplicate.")
            }
            if mine.filter({ now.timeIntervalSince($0.createdAt) < 86_400 }).count >= dailyLimit {
                return .twitterError(403, code: 185, "User is over daily status update limit.")
            }
            guard mediaIDs.count <= 4, mediaIDs.allSatisfy({ id in
                state.uploads[id].map { $0.finalized && !$0.failed && $0.pollsLeft == 0 } ?? false
            }) else {
                return .twitterError(400, code: 324, "Some of the submitted media ids are invalid.")
            }
            let stored = state.append(TwitterState.StoredStatus(
                id: 0, createdAt: now, text: text, author: author, inReplyTo: reply, mediaIDs: mediaIDs, posted: true))
            return .json(200, TwitterEncoding.json(stored))
        }
    }

    /// What was posted, oldest first, for `GET /_sandbox/posts` and ``Sandbox/posts()``.
    func posts() -> [SandboxPost] {
        state.withLock { state in
            state.statuses.filter(\.posted).map {
                SandboxPost(id: String($0.id), text: $0.text, inReplyToStatusID: $0.inReplyTo.map(String.init), mediaIDs: $0.mediaIDs)
            }
        }
    }
}
