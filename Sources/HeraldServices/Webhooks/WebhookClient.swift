import Foundation

/// POSTs JSON bodies to one webhook endpoint, signed as the Standard Webhooks specification
/// says (see ``WebhookSignature``), and says what each answer means.
///
/// - 2xx: delivered.
/// - 307 or 308: followed (up to five), the same POST with the same body and headers; sensitive
///   headers (`Authorization`, cookies) are not carried to another host. Any other redirect is
///   not followed, since it would turn the POST into a GET: it fails with the status and the
///   `Location`, so the URL can be corrected.
/// - 410 Gone: fails, saying the endpoint no longer takes deliveries.
/// - 429: `.rateLimited`, with `Retry-After` as the reset.
/// - anything else: `.httpStatus` (a caller retries 5xx and gives up on 4xx).
///
/// Every attempt has the client's deadline (``timeout``), so a receiver that answers slowly
/// costs one bounded attempt, and gets a fresh `webhook-timestamp` and signature; the
/// `webhook-id` stays the same, so the receiver can drop a repeat.
public struct WebhookClient: Sendable {
    /// The most redirects (307 / 308) followed.
    public static let maxRedirects = 5
    /// The deadline of one attempt when none is given; the specification recommends "between
    /// 15 and 30s".
    public static let defaultTimeout: Duration = .seconds(15)

    /// The endpoint.
    public let url: URL
    /// The signing secret; without one, deliveries carry `webhook-id` and `webhook-timestamp` only.
    public let secret: WebhookSecret?
    /// Extra header fields sent with every delivery.
    public let headers: [String: String]
    /// The deadline of one attempt.
    public let timeout: Duration
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date

    /// Creates a client.
    public init(url: URL, secret: WebhookSecret?, headers: [String: String] = [:], timeout: Duration? = nil,
                transport: any HTTPTransport = SchemeRoutingTransport(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.url = url
        self.secret = secret
        self.headers = headers
        self.timeout = timeout ?? Self.defaultTimeout
        self.transport = transport
        self.now = now
    }

    /// Delivers `body` (JSON) as message `id` (an idempotency key; see
    /// ``WebhookSignature/messageID(forKey:)``) and returns the `webhook-id` sent.
    ///
    /// - Throws: ``ServiceError`` as described on the type, or ``SystemCryptoError`` (as a
    ///   `.transport` error) when there is a secret but no HMAC-SHA256.
    @discardableResult
    public func deliver(key: String, body: Data) async throws -> String {
        let id = WebhookSignature.messageID(forKey: key)
        let signature: WebhookSignature
        do {
            signature = try WebhookSignature(id: id, timestamp: Int64(now().timeIntervalSince1970.rounded(.down)), body: body, secret: secret)
        } catch {
            throw ServiceError(kind: .invalidRequest, message: error.description)
        }
        var request = HTTPRequest(method: "POST", url: url, body: body, timeout: timeout, followsRedirects: false,
                                  maxResponseBytes: 1024 * 1024)
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request.headers[name] = value }
        request.headers["Content-Type"] = "application/json"
        request.headers["User-Agent"] = "Herald webhook"
        for field in signature.headers { request.headers[field.name] = field.value }
        var redirects = 0
        while true {
            let response = try await transport.exchange(request)
            if response.isSuccess { return id }
            let location = response.headers["Location"]
            let excerpt = ServiceError.excerpt(of: response.body)
            switch response.status {
            case 307, 308:
                guard let location, let next = URL(string: location, relativeTo: request.url)?.absoluteURL,
                      ["http", "https"].contains(next.scheme?.lowercased() ?? "") else {
                    throw ServiceError(kind: .httpStatus, message: "redirect (\(response.status)) without a usable Location", status: response.status)
                }
                guard redirects < Self.maxRedirects else {
                    throw ServiceError(kind: .httpStatus, message: "more than \(Self.maxRedirects) redirects", status: response.status)
                }
                redirects += 1
                request = SchemeRoutingTransport.redirected(request, to: next, status: response.status)
            case 300...399:
                throw ServiceError(kind: .httpStatus,
                                   message: "the webhook answered \(response.status) (a redirect\(location.map { " to \($0.prefix(200))" } ?? "")); "
                                       + "a POST is followed only on 307 or 308, so the URL should be updated",
                                   status: response.status)
            case 410:
                throw ServiceError(kind: .httpStatus, message: "the endpoint is gone (410 Gone): it takes no more deliveries; remove or replace the webhook",
                                   status: 410, bodyExcerpt: excerpt)
            case 429:
                throw ServiceError(kind: .rateLimited, message: "too many requests (429)", status: 429,
                                   rateLimit: RateLimit(headers: response.headers, now: now()), bodyExcerpt: excerpt)
            default:
                throw ServiceError(kind: .httpStatus, message: "HTTP status \(response.status)", status: response.status, bodyExcerpt: excerpt)
            }
        }
    }
}
