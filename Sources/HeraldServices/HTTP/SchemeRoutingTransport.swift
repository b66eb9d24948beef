import Foundation

/// The ``HTTPTransport`` the daemon uses: `http://` and `https://` both through
/// ``SocketHTTPTransport`` by default (TLS over the socket, with the system's OpenSSL), so
/// waiting costs no CPU whatever the scheme.
///
/// Redirects (301, 302, 303, 307, 308 with a `Location`) are followed for both schemes, up to
/// five, as `URLSession` would: 303, and 301 or 302 after a `POST`, become a `GET` without
/// body; credentials are not carried to another host, nor from `https` down to `http`. Each
/// hop has the request's whole timeout. A request with ``HTTPRequest/followsRedirects`` off
/// gets the redirect answer itself, on either scheme.
public struct SchemeRoutingTransport: HTTPTransport {
    /// The transport for `http` URLs.
    public let plain: any HTTPTransport
    /// The transport for `https` URLs.
    public let secure: any HTTPTransport

    static let maxRedirects = 5
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Routes between the two transports given.
    public init(plain: any HTTPTransport, secure: any HTTPTransport) {
        self.plain = plain
        self.secure = secure
    }

    /// Sends both schemes through one ``SocketHTTPTransport`` with `defaultTimeout`.
    public init(defaultTimeout: Duration = .seconds(30)) {
        let socket = SocketHTTPTransport(defaultTimeout: defaultTimeout)
        self.init(plain: socket, secure: socket)
    }

    /// Sends `request` through the transport for its scheme; throws what that transport
    /// throws, or `.transport` for a scheme that is neither `http` nor `https`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        var redirects = 0
        while true {
            let response: HTTPResponse
            switch request.url.scheme?.lowercased() {
            case "https":
                response = try await secure.send(request)
            case "http":
                response = try await plain.send(request)
            default:
                throw ServiceError.transport("the URL scheme \(request.url.scheme ?? "(none)") is neither http nor https")
            }
            guard request.followsRedirects, Self.redirectStatuses.contains(response.status), redirects < Self.maxRedirects,
                  let location = response.headers["Location"],
                  let next = URL(string: location, relativeTo: request.url)?.absoluteURL,
                  ["http", "https"].contains(next.scheme?.lowercased() ?? "") else {
                return response
            }
            request = Self.redirected(request, to: next, status: response.status)
            redirects += 1
        }
    }

    /// The request to send after a redirect of `request` to `url` with `status`.
    static func redirected(_ request: HTTPRequest, to url: URL, status: Int) -> HTTPRequest {
        var next = request
        next.url = url
        let method = request.method.uppercased()
        if status == 303 && method != "HEAD" || (status == 301 || status == 302) && method == "POST" {
            next.method = "GET"
            next.body = nil
            next.headers["Content-Type"] = nil
        }
        let downgraded = request.url.scheme?.lowercased() == "https" && url.scheme?.lowercased() != "https"
        if url.host?.lowercased() != request.url.host?.lowercased() || url.port != request.url.port || downgraded {
            for name in HTTPHeaders.sensitiveNames { next.headers[name] = nil }
        }
        return next
    }
}
