import Foundation
import HeraldHTTP

/// Emulates X API v2 at its real paths (`/2/…`) over the same seeded, growing timeline, posts
/// and uploads as the v1.1 emulation: the signed-in user, the reverse-chronological home
/// timeline, a user's posts, recent search, creating posts, and the v2 chunked upload.
/// Requests carry OAuth 1.0a user context (a JSON body is not signed) or an OAuth 2.0 user
/// access token (`Bearer`).
struct XEmulator {
    let twitter: TwitterEmulator

    var configuration: SandboxConfiguration { twitter.configuration }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        if let refusal = authenticate(request) { return refusal }
        let path = request.path
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // parts[0] is "" (the leading slash), parts[1] is "2".
        switch (request.method, parts.count) {
        case ("GET", 4) where path == "/2/users/me":
            return .json(200, .object([("data", XEncoding.user(twitter.me))]))
        case ("GET", 6) where parts[2] == "users" && parts[3] == "by" && parts[4] == "username":
            guard let person = people.first(where: { $0.screenName.lowercased() == parts[5].lowercased() }) else {
                return XEncoding.notFound(parts[5], parameter: "username", resource: "user")
            }
            return .json(200, .object([("data", XEncoding.user(person))]))
        case ("GET", 6) where parts[2] == "users" && parts[4] == "timelines" && parts[5] == "reverse_chronological":
            return homeTimeline(request, userID: parts[3])
        case ("GET", 5) where parts[2] == "users" && parts[4] == "tweets":
            return userPosts(request, userID: parts[3])
        case ("GET", 5) where path == "/2/tweets/search/recent":
            return search(request)
        case ("POST", 3) where path == "/2/tweets":
            return createPost(request)
        case (_, _) where path.hasPrefix("/2/media/upload"):
            return XMediaUploadEndpoint(emulator: twitter).handle(request, parts: parts)
        default:
            return XEncoding.problem(404, title: "Not Found", detail: "Sorry, that page does not exist.")
        }
    }

    private var people: [TimelineFixtures.Person] { TimelineFixtures.people + [twitter.me] }

    /// Nil when the request may go on; else the 401 the service answers.
    private func authenticate(_ request: SandboxRequest) -> SandboxResponse? {
        let unauthorized = XEncoding.problem(401, title: "Unauthorized", detail: "Unauthorized")
        guard let header = request.header("Authorization") else { return unauthorized }
        if header.hasPrefix("Bearer ") {
            return String(header.dropFirst(7)) == configuration.oauth2UserToken ? nil : unauthorized
        }
        let verifier = OAuthVerifier(credentials: configuration.credentials, timestampTolerance: configuration.oauthTimestampTolerance,
                                     now: configuration.now)
        return verifier.verify(request) == .valid ? nil : unauthorized
    }

    // MARK: Reading

    private func homeTimeline(_ request: SandboxRequest, userID: String) -> SandboxResponse {
        guard userID == String(twitter.me.id) else {
            return XEncoding.problem(403, title: "Forbidden", detail: "You can only read the home timeline of the authenticated user.")
        }
        guard let maxResults = Self.maxResults(request, range: 1...100, default: 100) else {
            return Self.rangeError(request, range: 1...100)
        }
        let now = configuration.now()
        let limit = configuration.homeTimelineLimit
        let window = configuration.rateLimitWindow
        let start = twitter.start
        let outcome = twitter.state.withLock { state -> (allowed: Bool, remaining: Int, reset: Date, statuses: [TwitterState.StoredStatus]) in
            if state.xWindowStart.map({ now >= $0.addingTimeInterval(window) }) ?? true {
                state.xWindowStart = now
                state.xWindowUsed = 0
            }
            let reset = (state.xWindowStart ?? now).addingTimeInterval(window)
            guard state.xWindowUsed < limit else { return (false, 0, reset, []) }
            state.xWindowUsed += 1
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            return (true, limit - state.xWindowUsed, reset, state.statuses)
        }
        let headers: [(name: String, value: String)] = [
            ("x-rate-limit-limit", String(limit)), ("x-rate-limit-remaining", String(outcome.remaining)),
            ("x-rate-limit-reset", String(Int(outcome.reset.timeIntervalSince1970.rounded(.up)))),
        ]
        guard outcome.allowed else {
            return XEncoding.problem(429, title: "Too Many Requests", detail: "Too Many Requests", headers: headers)
        }
        return page(outcome.statuses, request, maxResults: maxResults, tokenName: "pagination_token", headers: headers)
    }

    private func userPosts(_ request: SandboxRequest, userID: String) -> SandboxResponse {
        guard let id = UInt64(userID), people.contains(where: { $0.id == id }) else {
            return XEncoding.notFound(userID, parameter: "id", resource: "user")
        }
        guard let maxResults = Self.maxResults(request, range: 5...100, default: 10) else {
            return Self.rangeError(request, range: 5...100)
        }
        return page(grown().filter { $0.author.id == id }, request, maxResults: maxResults, tokenName: "pagination_token", headers: [])
    }

    private func search(_ request: SandboxRequest) -> SandboxResponse {
        guard let query = request.query("query"), !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            return XEncoding.invalidRequest("The `query` query parameter can not be empty", parameter: "query", value: "")
        }
        guard let maxResults = Self.maxResults(request, range: 10...100, default: 10) else {
            return Self.rangeError(request, range: 10...100)
        }
        // Terms all match (AND), ignoring case; `from:handle` matches the author. The last 7 days only.
        let terms = query.lowercased().split(separator: " ").map(String.init)
        let since = configuration.now().addingTimeInterval(-7 * 86_400)
        let matching = grown().filter { status in
            status.createdAt >= since && terms.allSatisfy { term in
                term.hasPrefix("from:") ? status.author.screenName.lowercased() == term.dropFirst(5) : status.text.lowercased().contains(term)
            }
        }
        let token = request.query("next_token") != nil ? "next_token" : "pagination_token"
        return page(matching, request, maxResults: maxResults, tokenName: token, headers: [])
    }

    private func grown() -> [TwitterState.StoredStatus] {
        let now = configuration.now()
        let start = twitter.start
        return twitter.state.withLock { state in
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            return state.statuses
        }
    }

    /// Newest first: `since_id` and `until_id` exclusive, `max_results` per page, and a
    /// `next_token` when older posts remain; `includes.users` with `expansions=author_id`.
    private func page(_ statuses: [TwitterState.StoredStatus], _ request: SandboxRequest, maxResults: Int, tokenName: String,
                      headers: [(name: String, value: String)]) -> SandboxResponse {
        let since = request.query("since_id").flatMap(UInt64.init)
        var until = request.query("until_id").flatMap(UInt64.init)
        if let token = request.query(tokenName) {
            guard token.hasPrefix("7140"), let boundary = UInt64(token.dropFirst(4), radix: 36) else {
                return XEncoding.invalidRequest("The `\(tokenName)` query parameter value [\(token)] is not valid",
                                                parameter: tokenName, value: token)
            }
            until = min(until ?? .max, boundary)
        }
        let chosen = statuses.reversed().filter { status in
            (since.map { status.id > $0 } ?? true) && (until.map { status.id < $0 } ?? true)
        }
        let page = Array(chosen.prefix(maxResults))
        let fields = Set((request.query("tweet.fields") ?? "").split(separator: ",").map(String.init))
        var meta: [(String, SandboxJSON)] = [("result_count", .int(Int64(page.count)))]
        var body: [(String, SandboxJSON)] = []
        if let newest = page.first, let oldest = page.last {
            body.append(("data", .array(page.map { XEncoding.post($0, fields: fields) })))
            let expansions = Set((request.query("expansions") ?? "").split(separator: ",").map(String.init))
            if expansions.contains("author_id") {
                var seen = Set<UInt64>()
                let authors = page.map(\.author).filter { seen.insert($0.id).inserted }
                body.append(("includes", .object([("users", .array(authors.map(XEncoding.user)))])))
            }
            meta = [("newest_id", .string(String(newest.id))), ("oldest_id", .string(String(oldest.id)))] + meta
            if chosen.count > page.count {
                meta.append(("next_token", .string("7140" + String(oldest.id, radix: 36))))
            }
        }
        body.append(("meta", .object(meta)))
        return .json(200, .object(body), headers: headers)
    }

    static func maxResults(_ request: SandboxRequest, range: ClosedRange<Int>, default value: Int) -> Int? {
        guard let text = request.query("max_results") else { return value }
        guard let number = Int(text), range.contains(number) else { return nil }
        return number
    }

    static func rangeError(_ request: SandboxRequest, range: ClosedRange<Int>) -> SandboxResponse {
        let value = request.query("max_results") ?? ""
        return XEncoding.invalidRequest(
            "The `max_results` query parameter value [\(value)] is not between \(range.lowerBound) and \(range.upperBound)",
            parameter: "max_results", value: value)
    }

    // MARK: Posting

    private func createPost(_ request: SandboxRequest) -> SandboxResponse {
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/json") == true,
              case .object(let fields)? = SandboxJSON.parse(request.body) else {
            return XEncoding.problem(400, title: "Invalid Request", detail: "The request body is not a JSON object.",
                                     type: "https://api.twitter.com/2/problems/invalid-request")
        }
        let body = SandboxJSON.object(fields)
        let text = body["text"]?.string ?? ""
        var mediaIDs: [String] = []
        if case .array(let ids)? = body["media"]?["media_ids"] { mediaIDs = ids.compactMap(\.string) }
        // The reference's pattern for a post id, ^[0-9]{1,19}$: anything else is refused, not
        // dropped (a reply that silently became a post would hide a client's bug).
        let replyText = body["reply"]?["in_reply_to_tweet_id"]?.string
        let reply = replyText.flatMap { $0.count <= 19 && $0.allSatisfy({ $0.isASCII && $0.isNumber }) ? UInt64($0) : nil }
        if body["reply"] != nil, reply == nil {
            return XEncoding.problem(400, title: "Invalid Request",
                                     detail: "$.reply.in_reply_to_tweet_id: does not match the regex pattern ^[0-9]{1,19}$",
                                     type: "https://api.twitter.com/2/problems/invalid-request")
        }
        guard !text.isEmpty || !mediaIDs.isEmpty else {
            return XEncoding.problem(400, title: "Invalid Request", detail: "The text or media of a post is required.",
                                     type: "https://api.twitter.com/2/problems/invalid-request")
        }
        guard text.count <= 280 else {
            return XEncoding.problem(400, title: "Invalid Request", detail: "Your Tweet text is too long.",
                                     type: "https://api.twitter.com/2/problems/invalid-request")
        }
        let now = configuration.now()
        let author = twitter.me
        let start = twitter.start
        let dailyLimit = configuration.dailyUpdateLimit
        return twitter.state.withLock { state -> SandboxResponse in
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            let mine = state.statuses.filter(\.posted)
            if !text.isEmpty, mine.contains(where: { $0.text == text }) {
                return XEncoding.problem(403, title: "Forbidden", detail: "You are not allowed to create a Tweet with duplicate content.")
            }
            let today = mine.filter { now.timeIntervalSince($0.createdAt) < 86_400 }
            if today.count >= dailyLimit {
                let reset = (today.map(\.createdAt).min() ?? now).addingTimeInterval(86_400)
                return XEncoding.problem(429, title: "Too Many Requests", detail: "Too Many Requests", headers: [
                    ("x-rate-limit-limit", String(dailyLimit)), ("x-rate-limit-remaining", "0"),
                    ("x-rate-limit-reset", String(Int(reset.timeIntervalSince1970.rounded(.up)))),
                ])
            }
            guard mediaIDs.count <= 4, mediaIDs.allSatisfy({ id in
                state.uploads[id].map { $0.finalized && !$0.failed && $0.pollsLeft == 0 } ?? false
            }) else {
                return XEncoding.problem(400, title: "Invalid Request", detail: "Your media IDs are invalid.",
                                         type: "https://api.twitter.com/2/problems/invalid-request")
            }
            let stored = state.append(TwitterState.StoredStatus(
                id: 0, createdAt: now, text: text, author: author, inReplyTo: reply, mediaIDs: mediaIDs, posted: true))
            let id = String(stored.id)
            return .json(201, .object([("data", .object([
                ("id", .string(id)), ("text", .string(text)), ("edit_history_tweet_ids", .array([.string(id)])),
            ]))]))
        }
    }
}
