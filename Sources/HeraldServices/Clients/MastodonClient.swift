import Foundation

/// A client of the Mastodon REST API (and of servers speaking it: GoToSocial, Pleroma, Akkoma):
/// timelines, posting statuses with an `Idempotency-Key`, and media uploads through
/// `POST /api/v2/media`, waiting for the server to process them.
///
/// Every request carries `Authorization: Bearer <token>`; the token never appears in an error,
/// a description or a dump of the client. Every method throws only ``ServiceError``:
/// `.rateLimited` for 429 (reset from `X-RateLimit-Reset`, or `Retry-After`), `.httpStatus`
/// with the server's `error` text as the message (401 a refused token, 422 a refused post),
/// `.decoding` for a body of the wrong shape (a 2xx carrying `{"error": …}` included),
/// `.processingFailed` for media the server never finished processing, and the transport's kinds.
public struct MastodonClient: Sendable, CustomStringConvertible, CustomReflectable {
    /// The server's root, e.g. `https://mastodon.social` or a sandbox URL.
    public var baseURL: URL
    /// Sends each request.
    public var transport: any HTTPTransport
    /// Waits between polls of media being processed.
    public var clock: any Clock<Duration>
    /// The wall-clock time, to read rate-limit reset dates.
    public var now: @Sendable () -> Date
    /// The deadline of each request; nil uses the transport's default.
    public var timeout: Duration?
    /// The pause between two polls of an uploaded media still being processed.
    public var mediaPollInterval: Duration
    /// Polls of a media still being processed before the upload is given up.
    public var maxMediaPolls: Int
    private let token: String

    /// How long a reset that lies in the past is taken to be from now: the period of the
    /// documented `/api/*` limits (300 requests per 5 minutes).
    public static let assumedRateLimitWindow: TimeInterval = 300
    /// The visibilities a status may have.
    public static let visibilities: Set<String> = ["public", "unlisted", "private", "direct"]

    /// Creates a client.
    public init(baseURL: URL, token: String, transport: any HTTPTransport, clock: any Clock<Duration> = ContinuousClock(),
                now: @escaping @Sendable () -> Date = { Date() }, timeout: Duration? = nil,
                mediaPollInterval: Duration = .seconds(2), maxMediaPolls: Int = 60) {
        self.baseURL = baseURL
        self.token = token
        self.transport = transport
        self.clock = clock
        self.now = now
        self.timeout = timeout
        self.mediaPollInterval = mediaPollInterval
        self.maxMediaPolls = max(1, maxMediaPolls)
    }

    /// `MastodonClient(<base URL>)`: the token is never shown.
    public var description: String { "MastodonClient(\(baseURL.absoluteString), token <redacted>)" }

    /// The base URL only, so `dump` shows no token either.
    public var customMirror: Mirror {
        Mirror(self, children: ["baseURL": baseURL.absoluteString, "token": "<redacted>"], displayStyle: .struct)
    }

    // MARK: Timelines

    /// Reads one page of `timeline`, newest first, with the `Link` header's `prev` and `next`
    /// pages and the rate-limit state.
    public func timeline(_ timeline: MastodonTimeline, _ query: MastodonTimelineQuery = MastodonTimelineQuery()) async throws -> MastodonTimelinePage {
        var parameters: [(String, String)] = []
        if case .local = timeline { parameters.append(("local", "true")) }
        if let limit = query.limit { parameters.append(("limit", String(min(40, max(1, limit))))) }
        if let minID = query.minID { parameters.append(("min_id", minID)) }
        if let sinceID = query.sinceID { parameters.append(("since_id", sinceID)) }
        if let maxID = query.maxID { parameters.append(("max_id", maxID)) }
        let url = try URLBuilder.url(baseURL, path: timeline.path, query: parameters)
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: headers(), timeout: timeout))
        let statuses = try Self.decode([MastodonStatus].self, from: response)
        let links = MastodonPageLink.parse(response.headers["Link"])
        return MastodonTimelinePage(statuses: statuses, rateLimit: rateLimit(response.headers), previous: links.previous,
                                    next: links.next, partial: response.status == 206)
    }

    // MARK: Posting

    /// Posts a status (`POST /api/v1/statuses`, form-encoded).
    ///
    /// - Parameter idempotencyKey: sent as `Idempotency-Key`; the server answers a repeat
    ///   within about an hour with the status it made the first time. A key that is not plain
    ///   visible ASCII (or over 255 bytes) is sent as its SHA-1 digest.
    /// - Throws: `.invalidRequest` for a draft with neither text nor media, or an unknown
    ///   visibility (nothing sent); `.httpStatus` 422 with the server's reason for a refused
    ///   status.
    public func postStatus(_ draft: MastodonStatusDraft, idempotencyKey: String? = nil) async throws -> MastodonStatus {
        if draft.status.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && draft.mediaIDs.isEmpty {
            throw ServiceError.invalidRequest("an empty status without media is not posted")
        }
        if let visibility = draft.visibility, !Self.visibilities.contains(visibility) {
            throw ServiceError.invalidRequest("visibility \"\(visibility)\" is not one of direct, private, public, unlisted")
        }
        var form: [(String, String)] = []
        if !draft.status.isEmpty { form.append(("status", draft.status)) }
        if let visibility = draft.visibility { form.append(("visibility", visibility)) }
        if let spoiler = draft.spoilerText, !spoiler.isEmpty { form.append(("spoiler_text", spoiler)) }
        if let language = draft.language, !language.isEmpty { form.append(("language", language)) }
        if let reply = draft.inReplyToID { form.append(("in_reply_to_id", reply)) }
        if draft.sensitive { form.append(("sensitive", "true")) }
        for id in draft.mediaIDs { form.append(("media_ids[]", id)) }
        var headers = headers()
        headers["Content-Type"] = FormBody.contentType
        if let idempotencyKey { headers["Idempotency-Key"] = Self.headerSafeKey(idempotencyKey) }
        let url = try URLBuilder.url(baseURL, path: "/api/v1/statuses")
        let response = try await send(HTTPRequest(method: "POST", url: url, headers: headers, body: Data(FormBody.encode(form).utf8),
                                                  timeout: timeout))
        return try Self.decode(MastodonStatus.self, from: response)
    }

    /// The key as sent in `Idempotency-Key`: itself when it is visible ASCII of at most 255
    /// bytes, else `sha1-` and its digest, so any key makes a valid header.
    public static func headerSafeKey(_ key: String) -> String {
        let plain = !key.isEmpty && key.utf8.count <= 255 && key.utf8.allSatisfy { (0x21...0x7E).contains($0) }
        return plain ? key : "sha1-" + SHA1.hash(Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Media

    /// Uploads media (`POST /api/v2/media`, multipart `file` and `description`), then, while
    /// the server is processing it (202, or no `url` yet), polls `GET /api/v1/media/:id` every
    /// ``mediaPollInterval`` on ``clock`` until its `url` is set.
    ///
    /// - Parameters:
    ///   - mediaType: the file's MIME type, e.g. `image/png`, `video/mp4`.
    ///   - description: the alt text.
    ///   - progress: after the upload (`uploading`, all bytes sent), each poll (`processing`)
    ///     and at the end (`completed`).
    /// - Throws: `.invalidRequest` for no bytes; `.processingFailed` when the media is still
    ///   processing after ``maxMediaPolls`` polls, or the server reports it could not process it
    ///   (422 on a poll); any error of the requests.
    public func uploadMedia(_ data: Data, mediaType: String, fileName: String = "media", description: String? = nil,
                            progress: @Sendable (UploadProgress) -> Void = { _ in }) async throws -> MastodonMediaAttachment {
        guard !data.isEmpty else { throw ServiceError.invalidRequest("no media bytes to upload") }
        var fields: [(String, String)] = []
        if let description, !description.isEmpty { fields.append(("description", description)) }
        let multipart = MultipartBody(fields: fields, fileField: "file", fileData: data, fileName: Self.safeFileName(fileName), fileType: mediaType)
        var headers = headers()
        headers["Content-Type"] = multipart.contentType
        let url = try URLBuilder.url(baseURL, path: "/api/v2/media")
        let response = try await send(HTTPRequest(method: "POST", url: url, headers: headers, body: multipart.data, timeout: timeout))
        var attachment = try Self.decode(MastodonMediaAttachment.self, from: response)
        var report = UploadProgress(phase: .uploading, mediaID: attachment.id, bytesSent: data.count, totalBytes: data.count)
        progress(report)
        var polls = 0
        while !attachment.isProcessed {
            guard polls < maxMediaPolls else {
                throw ServiceError(kind: .processingFailed,
                                   message: "media \(attachment.id) was still processing after \(polls) polls; giving up")
            }
            report.phase = .processing
            progress(report)
            do {
                try await clock.sleep(for: mediaPollInterval)
            } catch {
                throw ServiceError.cancelled
            }
            polls += 1
            do {
                attachment = try await media(id: attachment.id)
            } catch let error as ServiceError where error.kind == .httpStatus && error.status == 422 {
                throw ServiceError(kind: .processingFailed, message: "media \(attachment.id) could not be processed: \(error.message)",
                                   status: 422, bodyExcerpt: error.bodyExcerpt)
            }
        }
        report.phase = .completed
        report.processingPercent = polls > 0 ? 100 : nil
        progress(report)
        return attachment
    }

    /// An uploaded attachment (`GET /api/v1/media/:id`): 200 once processed, 206 while the
    /// server is still processing it (its `url` then nil).
    public func media(id: String) async throws -> MastodonMediaAttachment {
        let url = try URLBuilder.url(baseURL, path: "/api/v1/media/\(PercentEncoding.encode(id))")
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: headers(), timeout: timeout))
        if response.status == 206, response.body.isEmpty {
            // The documentation shows 206 with no body: still processing.
            return MastodonMediaAttachment(id: id, type: "unknown", url: nil)
        }
        var attachment = try Self.decode(MastodonMediaAttachment.self, from: response)
        if response.status == 206 { attachment.url = nil }
        return attachment
    }

    /// The MIME type of a media file by its extension; nil for one Mastodon takes no media of.
    public static func mediaType(forExtension pathExtension: String) -> String? {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic": "image/heic"
        case "avif": "image/avif"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        case "mp3": "audio/mpeg"
        case "ogg", "oga": "audio/ogg"
        case "wav": "audio/wave"
        case "flac": "audio/flac"
        case "m4a": "audio/mp4"
        default: nil
        }
    }

    // MARK: Exchanges

    private func headers() -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer \(token)"
        headers["Accept"] = "application/json"
        return headers
    }

    /// A file name safe inside a quoted multipart header.
    private static func safeFileName(_ name: String) -> String {
        let cleaned = String(name.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }.map(Character.init))
        return cleaned.isEmpty ? "media" : cleaned
    }

    /// Sends `request`; a non-2xx answer becomes a ``ServiceError`` with the server's reason.
    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await transport.exchange(request)
        if response.isSuccess { return response }
        let reason = Self.errorText(in: response.body)
        let limit = rateLimit(response.headers)
        let excerpt = ServiceError.excerpt(of: response.body)
        if response.status == 429 {
            var reset = limit ?? RateLimit()
            // A reset that already passed (clocks apart) is one window from now, so a caller
            // waiting for it does not come straight back.
            if reset.reset.map({ $0 <= now() }) ?? true { reset.reset = now().addingTimeInterval(Self.assumedRateLimitWindow) }
            throw ServiceError(kind: .rateLimited, message: reason ?? "rate limit exceeded", status: 429, rateLimit: reset,
                               bodyExcerpt: excerpt)
        }
        throw ServiceError(kind: .httpStatus, message: reason ?? "HTTP status \(response.status)", status: response.status,
                           rateLimit: limit, bodyExcerpt: excerpt)
    }

    /// `X-RateLimit-Limit`, `-Remaining` and `-Reset` (an ISO 8601 time, or epoch seconds),
    /// with `Retry-After` for the reset when there is none.
    func rateLimit(_ headers: HTTPHeaders) -> RateLimit? {
        let limit = headers["X-RateLimit-Limit"].flatMap { Int($0.trimmed) }
        let remaining = headers["X-RateLimit-Remaining"].flatMap { Int($0.trimmed) }
        var reset: Date?
        if let text = headers["X-RateLimit-Reset"]?.trimmed {
            if let seconds = Double(text), seconds.isFinite, abs(seconds) < 1e12 {
                reset = Date(timeIntervalSince1970: seconds)
            } else {
                reset = ServiceDates.parseISO8601(text)
            }
        }
        if reset == nil, let fallback = RateLimit(headers: HTTPHeaders([("Retry-After", headers["Retry-After"] ?? "")]), now: now()) {
            reset = fallback.reset
        }
        if limit == nil && remaining == nil && reset == nil { return nil }
        return RateLimit(limit: limit, remaining: remaining, reset: reset)
    }

    /// The server's `error` (with `error_description`, as OAuth errors have) from
    /// `{"error": "…"}`; nil for any other body.
    static func errorText(in body: Data) -> String? {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let error = object["error"] as? String, !error.isEmpty else { return nil }
        if let detail = object["error_description"] as? String, !detail.isEmpty, detail != error { return "\(error): \(detail)" }
        return error
    }

    /// Decodes a 2xx body; one carrying `{"error": …}` instead is a `.decoding` error saying so.
    static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws -> T {
        do {
            return try JSONBodyDecoder.decode(type, from: response)
        } catch let error as ServiceError {
            if let reason = errorText(in: response.body) {
                throw ServiceError(kind: .decoding, message: "the server answered \(response.status) with an error instead: \(reason)",
                                   status: response.status, location: "body", bodyExcerpt: error.bodyExcerpt)
            }
            throw error
        }
    }
}

/// A status to post through ``MastodonClient/postStatus(_:idempotencyKey:)``.
public struct MastodonStatusDraft: Sendable, Hashable, Codable {
    /// The text (optional when there is media).
    public var status: String
    /// `public`, `unlisted`, `private` or `direct`; the account's default when nil.
    public var visibility: String?
    /// The content warning shown before the text.
    public var spoilerText: String?
    /// ISO 639 language code.
    public var language: String?
    /// Uploaded attachments to attach.
    public var mediaIDs: [String]
    /// The status this one answers.
    public var inReplyToID: String?
    /// Whether the media is marked sensitive.
    public var sensitive: Bool

    /// Creates a draft.
    public init(status: String, visibility: String? = nil, spoilerText: String? = nil, language: String? = nil,
                mediaIDs: [String] = [], inReplyToID: String? = nil, sensitive: Bool = false) {
        self.status = status
        self.visibility = visibility
        self.spoilerText = spoilerText
        self.language = language
        self.mediaIDs = mediaIDs
        self.inReplyToID = inReplyToID
        self.sensitive = sensitive
    }
}
