import Foundation

/// A client of the Twitter-style REST API (v1.1 shapes): timelines, posting and chunked
/// media upload, every request signed with OAuth 1.0a HMAC-SHA1.
///
/// Every method throws only ``ServiceError``: `.rateLimited` (with the reset time) for 429 /
/// code 88, `.httpStatus` with the service's codes (e.g. 187 duplicate, 32 bad signature),
/// `.decoding` for a body of the wrong shape, and the transport's kinds.
public struct TwitterClient: Sendable {
    /// The API root, e.g. `https://api.twitter.com` or a sandbox URL.
    public var baseURL: URL
    /// The media upload root, e.g. `https://upload.twitter.com`; defaults to `baseURL`.
    public var uploadBaseURL: URL
    /// Signs each request.
    public var signer: OAuthSigner
    /// Sends each request.
    public var transport: any HTTPTransport
    /// Waits between STATUS polls of a processing upload (`check_after_secs`).
    public var clock: any Clock<Duration>
    /// The deadline of each request; nil uses the transport's default.
    public var timeout: Duration?
    /// Largest APPEND segment (at most 5 MB).
    public var segmentSize: Int
    /// STATUS polls before an upload is given up.
    public var maxStatusPolls: Int
    /// Limits checked locally before an upload starts; nil checks nothing.
    public var mediaLimits: MediaLimits? = .twitterVideo

    /// The service's largest APPEND segment.
    public static let maxSegmentSize = 5 * 1024 * 1024
    /// The service's most APPEND segments per upload (`segment_index` 0…999).
    public static let maxSegmentCount = 1000

    /// Creates a client.
    public init(
        baseURL: URL, uploadBaseURL: URL? = nil, credentials: OAuthCredentials, transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(), timeout: Duration? = nil,
        segmentSize: Int = TwitterClient.maxSegmentSize, maxStatusPolls: Int = 60
    ) {
        self.init(
            baseURL: baseURL, uploadBaseURL: uploadBaseURL, signer: OAuthSigner(credentials: credentials),
            transport: transport, clock: clock, timeout: timeout, segmentSize: segmentSize, maxStatusPolls: maxStatusPolls)
    }

    /// Creates a client with a custom signer (fixed nonce or timestamp in tests).
    public init(
        baseURL: URL, uploadBaseURL: URL? = nil, signer: OAuthSigner, transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(), timeout: Duration? = nil,
        segmentSize: Int = TwitterClient.maxSegmentSize, maxStatusPolls: Int = 60
    ) {
        self.baseURL = baseURL
        self.uploadBaseURL = uploadBaseURL ?? baseURL
        self.signer = signer
        self.transport = transport
        self.clock = clock
        self.timeout = timeout
        self.segmentSize = segmentSize
        self.maxStatusPolls = maxStatusPolls
    }

    /// Reads the signed-in user's home timeline (`statuses/home_timeline`), newest first.
    ///
    /// The home timeline is rate limited (15 requests / 15 minutes on the real service);
    /// ``TimelinePage/rateLimit`` tells what is left.
    public func homeTimeline(_ query: TimelineQuery = TimelineQuery(), format: TimelineFormat = .json) async throws -> TimelinePage {
        try await timeline("home_timeline", parameters: query.parameters, format: format)
    }

    /// Reads a user's timeline (`statuses/user_timeline`) by screen name, newest first.
    public func userTimeline(screenName: String, _ query: TimelineQuery = TimelineQuery(), format: TimelineFormat = .json) async throws -> TimelinePage {
        try await timeline("user_timeline", parameters: [("screen_name", screenName)] + query.parameters, format: format)
    }

    /// Reads a user's timeline by user id, newest first.
    public func userTimeline(userID: String, _ query: TimelineQuery = TimelineQuery(), format: TimelineFormat = .json) async throws -> TimelinePage {
        try await timeline("user_timeline", parameters: [("user_id", userID)] + query.parameters, format: format)
    }

    private func timeline(_ name: String, parameters: [(String, String)], format: TimelineFormat) async throws -> TimelinePage {
        let url = try URLBuilder.url(baseURL, path: "/1.1/statuses/\(name).\(format.rawValue)", query: parameters)
        let response = try await send(method: "GET", url: url)
        let statuses: [Status]
        switch format {
        case .json: statuses = try JSONBodyDecoder.decode([Status].self, from: response)
        case .xml: statuses = try TimelineXMLParser.parse(response)
        }
        return TimelinePage(statuses: statuses, rateLimit: RateLimit(headers: response.headers))
    }

    /// Posts a status (`statuses/update`) with a form-urlencoded, RFC 3986-encoded body.
    ///
    /// - Parameters:
    ///   - status: the text; empty text is refused locally (`.invalidRequest`).
    ///   - inReplyTo: the id of the status this answers.
    ///   - mediaIDs: uploaded media to attach (at most 4 photos or 1 video).
    /// - Returns: the created status.
    /// - Throws: `.httpStatus` with code 187 for a duplicate, 185 over the daily limit.
    public func update(status: String, inReplyTo: String? = nil, mediaIDs: [String] = []) async throws -> Status {
        guard !status.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ServiceError.invalidRequest("an empty status is not posted")
        }
        var form: [(String, String)] = [("status", status)]
        if let inReplyTo { form.append(("in_reply_to_status_id", inReplyTo)) }
        if !mediaIDs.isEmpty { form.append(("media_ids", mediaIDs.joined(separator: ","))) }
        let url = try URLBuilder.url(baseURL, path: "/1.1/statuses/update.json")
        let response = try await send(method: "POST", url: url, form: form)
        return try JSONBodyDecoder.decode(Status.self, from: response)
    }

    /// Signs and sends one request; `form` becomes an urlencoded body and is signed.
    func send(method: String, url: URL, form: [(String, String)]? = nil, body: Data? = nil, contentType: String? = nil) async throws -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Authorization"] = signer.authorizationHeader(method: method, url: url, bodyParameters: form ?? [])
        headers["Accept"] = "application/json, application/xml;q=0.9"
        var payload = body
        if let form {
            headers["Content-Type"] = FormBody.contentType
            payload = Data(FormBody.encode(form).utf8)
        } else if let contentType {
            headers["Content-Type"] = contentType
        }
        let request = HTTPRequest(method: method, url: url, headers: headers, body: payload, timeout: timeout)
        return try await transport.perform(request)
    }
}
