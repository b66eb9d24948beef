import Foundation

/// Reads a feed politely: a conditional GET with the validators of the last answer, redirects
/// followed (and a permanent move reported), `Retry-After` on 429 and 503 honoured, a bound on
/// the body's size.
///
/// Redirects (301, 302, 303, 307, 308 with a `Location`) are followed here rather than by the
/// transport, up to five, so the client knows where the feed now lives: when the first hop is
/// permanent (301 or 308), ``FeedFetch/movedTo`` names where the permanent hops lead, and the
/// caller should update its URL.
public struct FeedClient: Sendable {
    /// The largest feed body read by default: 10 MiB, far above any real feed.
    public static let defaultMaxBytes = 10 * 1024 * 1024
    /// The most redirects followed for one fetch.
    public static let maxRedirects = 5

    private let transport: any HTTPTransport
    private let timeout: Duration?
    /// The largest body accepted, in bytes.
    public let maxBytes: Int
    private let now: @Sendable () -> Date

    /// Creates a client; `now` reads `Retry-After` dates and delays.
    public init(transport: any HTTPTransport = SchemeRoutingTransport(), timeout: Duration? = nil, maxBytes: Int = FeedClient.defaultMaxBytes,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.transport = transport
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.now = now
    }

    /// Fetches `url`, sending `validators` as `If-None-Match` / `If-Modified-Since`.
    ///
    /// - Throws: ``ServiceError``: `.rateLimited` for 429, and for 503 with `Retry-After` (the
    ///   reset is when to come back); `.httpStatus` for other non-2xx answers (a redirect loop
    ///   or a redirect without `Location` included); `.decoding` for a body that is not a feed
    ///   or is larger than ``maxBytes``; `.transport`, `.timeout`, `.cancelled` from the exchange.
    public func fetch(_ url: URL, validators: FeedValidators = FeedValidators()) async throws -> FeedFetch {
        var request = HTTPRequest(url: url, timeout: timeout, followsRedirects: false, maxResponseBytes: maxBytes)
        request.headers["Accept"] = "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1"
        request.headers["User-Agent"] = "Herald feed loader"
        if let etag = validators.etag { request.headers["If-None-Match"] = etag }
        if let lastModified = validators.lastModified { request.headers["If-Modified-Since"] = lastModified }
        var movedTo: URL?
        var permanentSoFar = true
        var redirects = 0
        while true {
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch let error as ServiceError {
                if error.kind == .decoding, error.location == "body" {
                    throw ServiceError.decoding("the feed is larger than the limit of \(maxBytes) bytes (\(error.message))", location: "body", body: Data())
                }
                throw error
            } catch is CancellationError {
                throw ServiceError.cancelled
            } catch {
                throw ServiceError.transport(String(describing: error))
            }
            if SchemeRoutingTransport.redirectStatuses.contains(response.status) {
                guard let location = response.headers["Location"], let next = URL(string: location, relativeTo: request.url)?.absoluteURL,
                      ["http", "https"].contains(next.scheme?.lowercased() ?? "") else {
                    throw ServiceError(kind: .httpStatus, message: "redirect (\(response.status)) without a usable Location", status: response.status)
                }
                guard redirects < Self.maxRedirects else {
                    throw ServiceError(kind: .httpStatus, message: "more than \(Self.maxRedirects) redirects", status: response.status)
                }
                redirects += 1
                permanentSoFar = permanentSoFar && (response.status == 301 || response.status == 308)
                if permanentSoFar { movedTo = next }
                request = SchemeRoutingTransport.redirected(request, to: next, status: response.status)
                continue
            }
            let answered = FeedValidators(etag: response.headers["ETag"] ?? validators.etag,
                                          lastModified: response.headers["Last-Modified"] ?? validators.lastModified).bounded
            if response.status == 304 {
                return FeedFetch(document: nil, validators: answered, url: request.url, movedTo: movedTo)
            }
            if response.status == 429 || response.status == 503 && response.headers["Retry-After"] != nil {
                let limit = RateLimit(headers: response.headers, now: now())
                let reason = response.status == 429 ? "too many requests (429)" : "service unavailable (503)"
                throw ServiceError(kind: .rateLimited, message: reason + (limit?.reset.map { ", retry after \(ServiceDates.formatISO8601($0))" } ?? ""),
                                   status: response.status, rateLimit: limit, bodyExcerpt: ServiceError.excerpt(of: response.body))
            }
            guard response.isSuccess else {
                throw ServiceError(kind: .httpStatus, message: "HTTP status \(response.status)", status: response.status,
                                   bodyExcerpt: ServiceError.excerpt(of: response.body))
            }
            if response.body.count > maxBytes {
                throw ServiceError.decoding("the feed is larger than the limit of \(maxBytes) bytes", location: "body", body: Data())
            }
            let document = try FeedParser.parse(response.body, contentType: response.headers["Content-Type"])
            return FeedFetch(document: document, validators: answered, url: request.url, movedTo: movedTo)
        }
    }
}
