import Foundation
import HeraldIO

/// An HTTP request as the clients build it, independent of any transport.
public struct HTTPRequest: Sendable, Hashable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?
    /// The whole-exchange deadline; nil uses the transport's default.
    public var timeout: Duration?
    /// How an `https` connection is verified; nil: against the system's CA store, with the
    /// host name (see ``TLSConfiguration``). A service's `"caFile"` / `"insecure"` end up here.
    public var tls: TLSConfiguration?
    /// Whether ``SchemeRoutingTransport`` follows a redirect answer (the default), or returns it
    /// for the caller to decide (a feed notes a permanent move; a webhook POST follows only 307
    /// and 308).
    public var followsRedirects: Bool = true
    /// The largest response body accepted, in bytes; nil uses the transport's own bound (64 MiB).
    /// A larger body fails the exchange as `.decoding` at `body` as soon as the excess is known
    /// (from `Content-Length`, or while reading), without holding more of it.
    public var maxResponseBytes: Int?

    /// Creates a request.
    public init(method: String = "GET", url: URL, headers: HTTPHeaders = [:], body: Data? = nil, timeout: Duration? = nil,
                tls: TLSConfiguration? = nil, followsRedirects: Bool = true, maxResponseBytes: Int? = nil) {
        self.followsRedirects = followsRedirects
        self.maxResponseBytes = maxResponseBytes
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.tls = tls
    }
}
