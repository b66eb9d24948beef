import Foundation

/// A client of X API v2: the signed-in user, the home timeline, a user's posts, recent search,
/// creating posts, and the v2 chunked media upload (see `XClient+Upload.swift`).
///
/// Authorization is OAuth 1.0a user context or an OAuth 2.0 user access token
/// (``XAuthorization``). Every method throws only ``ServiceError``: `.rateLimited` for 429 (with
/// the reset from `x-rate-limit-reset`), `.httpStatus` for other refusals (the problem's `title`
/// and `detail` in the message; the "duplicate content" refusal of `POST /2/tweets` carries code
/// 187, the code v1.1 gave the same refusal, so callers treat both alike), `.decoding` for a
/// body of the wrong shape or a 200 that holds only `errors`, and the transport's kinds.
public struct XClient: Sendable {
    /// The API root, e.g. `https://api.x.com` or a sandbox URL.
    public var baseURL: URL
    /// The media upload root; `https://api.x.com` serves `/2/media/upload` too, so it defaults to `baseURL`.
    public var uploadBaseURL: URL
    /// Who the requests are made as.
    public var authorization: XAuthorization
    /// Signs OAuth 1.0a requests (nonce and timestamp injectable); nil makes a default signer.
    public var signer: OAuthSigner?
    /// Sends each request.
    public var transport: any HTTPTransport
    /// Waits between status polls of a processing upload (`check_after_secs`).
    public var clock: any Clock<Duration>
    /// The deadline of each request; nil uses the transport's default.
    public var timeout: Duration?
    /// Largest append segment.
    public var segmentSize: Int
    /// Status polls before an upload that is still processing is given up.
    public var maxStatusPolls: Int
    /// Limits checked locally before an upload starts; nil checks nothing.
    public var mediaLimits: MediaLimits? = .twitterVideo

    /// The post fields Herald asks for on every read.
    public static let tweetFields = "created_at,author_id,referenced_tweets"

    /// Creates a client.
    public init(
        baseURL: URL, uploadBaseURL: URL? = nil, authorization: XAuthorization, signer: OAuthSigner? = nil,
        transport: any HTTPTransport, clock: any Clock<Duration> = ContinuousClock(), timeout: Duration? = nil,
        segmentSize: Int = TwitterClient.maxSegmentSize, maxStatusPolls: Int = 60
    ) {
        self.baseURL = baseURL
        self.uploadBaseURL = uploadBaseURL ?? baseURL
        self.authorization = authorization
        self.signer = signer
        self.transport = transport
        self.clock = clock
        self.timeout = timeout
        self.segmentSize = segmentSize
        self.maxStatusPolls = maxStatusPolls
    }

    // MARK: Users

    /// The signed-in user (`GET /2/users/me`).
    public func me() async throws -> XUser {
        let response = try await send("GET", try URLBuilder.url(baseURL, path: "/2/users/me"))
        return try XResponse.decode(XDataBody<XUser>.self, from: response).data
    }

    /// A user by handle (`GET /2/users/by/username/:username`).
    public func user(username: String) async throws -> XUser {
        let handle = username.hasPrefix("@") ? String(username.dropFirst()) : username
        guard !handle.isEmpty, handle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw ServiceError.invalidRequest("\"\(username)\" is not a username (letters, digits and _)")
        }
        let response = try await send("GET", try URLBuilder.url(baseURL, path: "/2/users/by/username/\(handle)"))
        return try XResponse.decode(XDataBody<XUser>.self, from: response).data
    }

    // MARK: Reading

    /// The user's home timeline, newest first (`GET /2/users/:id/timelines/reverse_chronological`);
    /// `userID` must be the signed-in user's (see ``me()``).
    public func homeTimeline(userID: String, _ query: XTimelineQuery = XTimelineQuery()) async throws -> XTimelinePage {
        try await timeline(path: "/2/users/\(try Self.pathID(userID))/timelines/reverse_chronological", query.parameters)
    }

    /// A user's posts, newest first (`GET /2/users/:id/tweets`).
    public func userPosts(userID: String, _ query: XTimelineQuery = XTimelineQuery()) async throws -> XTimelinePage {
        try await timeline(path: "/2/users/\(try Self.pathID(userID))/tweets", query.parameters)
    }

    /// Posts of the last seven days matching `search`, newest first (`GET /2/tweets/search/recent`).
    public func searchRecent(_ search: String, _ query: XTimelineQuery = XTimelineQuery()) async throws -> XTimelinePage {
        guard !search.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ServiceError.invalidRequest("an empty search query is not sent")
        }
        // Recent search names its page `next_token`; the timelines name theirs `pagination_token`.
        let parameters = query.parameters.map { $0.0 == "pagination_token" ? ("next_token", $0.1) : $0 }
        return try await timeline(path: "/2/tweets/search/recent", [("query", search)] + parameters)
    }

    private func timeline(path: String, _ parameters: [(String, String)]) async throws -> XTimelinePage {
        let all = parameters + [("tweet.fields", Self.tweetFields), ("expansions", "author_id"), ("user.fields", "name,username")]
        let response = try await send("GET", try URLBuilder.url(baseURL, path: path, query: all))
        let body = try XResponse.decode(XTimelineBody.self, from: response)
        var users: [String: XUser] = [:]
        for user in body.includes?.users ?? [] { users[user.id] = user }
        return XTimelinePage(
            posts: body.data ?? [], users: users, nextToken: body.meta?.nextToken, newestID: body.meta?.newestID,
            resultCount: body.meta?.resultCount, rateLimit: RateLimit(headers: response.headers))
    }

    // MARK: Posting

    /// Creates a post (`POST /2/tweets` with a JSON body: `text`, `media.media_ids`, `reply.in_reply_to_tweet_id`).
    ///
    /// - Throws: `.invalidRequest` for empty text or more than four media; `.httpStatus` 403 with
    ///   code 187 when the service refuses duplicate content.
    public func createPost(text: String, mediaIDs: [String] = [], inReplyTo: String? = nil) async throws -> XCreatedPost {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !mediaIDs.isEmpty else {
            throw ServiceError.invalidRequest("an empty post is not sent")
        }
        guard mediaIDs.count <= 4 else { throw ServiceError.invalidRequest("\(mediaIDs.count) media; a post takes at most 4") }
        var body: [String: Any] = ["text": text]
        if !mediaIDs.isEmpty { body["media"] = ["media_ids": mediaIDs] }
        if let inReplyTo { body["reply"] = ["in_reply_to_tweet_id": inReplyTo] }
        let json = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        let response = try await send("POST", try URLBuilder.url(baseURL, path: "/2/tweets"), body: json, contentType: "application/json")
        return try XResponse.decode(XDataBody<XCreatedPost>.self, from: response).data
    }

    // MARK: Sending

    /// Authorizes and sends one request; a JSON or multipart body is not signed (OAuth 1.0a
    /// signs only the query and the `oauth_*` parameters then).
    func send(_ method: String, _ url: URL, body: Data? = nil, contentType: String? = nil) async throws -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Authorization"] = authorization.header(method: method, url: url, signer: signer)
        headers["Accept"] = "application/json"
        if let contentType { headers["Content-Type"] = contentType }
        let request = HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)
        let response = try await transport.exchange(request)
        return try XResponse.requireSuccess(response)
    }

    /// An id that may stand in a path: decimal digits only, so nothing can change the path.
    static func pathID(_ id: String) throws -> String {
        guard !id.isEmpty, id.utf8.count <= 19, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw ServiceError.invalidRequest("\"\(id)\" is not an X id (decimal digits)")
        }
        return id
    }
}

/// The parameters of a v2 timeline or search read.
public struct XTimelineQuery: Sendable, Hashable {
    /// Posts per page (`max_results`; the endpoints' ranges differ: home 1…100, a user's posts
    /// 5…100, search 10…100); nil uses the service's default.
    public var maxResults: Int?
    /// Only posts newer than this id.
    public var sinceID: String?
    /// The page to read (`pagination_token`, from the previous page's `meta.next_token`).
    public var paginationToken: String?

    /// Creates a query.
    public init(maxResults: Int? = nil, sinceID: String? = nil, paginationToken: String? = nil) {
        self.maxResults = maxResults
        self.sinceID = sinceID
        self.paginationToken = paginationToken
    }

    var parameters: [(String, String)] {
        var pairs: [(String, String)] = []
        if let maxResults { pairs.append(("max_results", String(min(100, max(1, maxResults))))) }
        if let sinceID { pairs.append(("since_id", sinceID)) }
        if let paginationToken { pairs.append(("pagination_token", paginationToken)) }
        return pairs
    }
}
