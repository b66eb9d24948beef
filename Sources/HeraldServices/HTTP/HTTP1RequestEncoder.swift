import Foundation
import HeraldIO

/// Where an `http://` or `https://` request goes and the bytes that carry it on an HTTP/1.1
/// connection.
struct HTTP1RequestEncoder {
    /// Whether the URL is `https` (the connection needs TLS).
    let isSecure: Bool
    /// The host to resolve (an IPv6 literal without brackets).
    let host: String
    /// The TCP port (80 unless the URL says otherwise).
    let port: Int
    /// The request line, head and body, ready to write.
    let bytes: [UInt8]
    /// Whether the request lets the connection carry the next one.
    let keepAlive: Bool
    /// Whether sending the request twice does no more than sending it once (RFC 9110 §9.2.2):
    /// only such a request goes on a kept-alive connection, which the server may have closed
    /// meanwhile, so that the one retry on a fresh connection can never post twice.
    let isIdempotent: Bool
    /// Whether the request is a `HEAD`, whose response never has a body.
    let isHeadRequest: Bool
    /// The largest response body accepted.
    let maxResponseBytes: Int

    /// Header fields the connection sets itself; a caller's value is ignored.
    static let connectionFields: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "expect", "keep-alive", "te", "upgrade"]

    /// How the connection is verified, for `https`.
    let tls: TLSConfiguration
    /// `https://host:port` (and the TLS settings): the key under which a kept-alive connection
    /// is reused.
    var origin: String { "\(isSecure ? "https" : "http")://\(host):\(port)" + (isSecure ? "#\(tls.hashValue)" : "") }

    /// Encodes `request`: for one connection (`Connection: close`), or, with `keepAlive`, for a
    /// connection that may carry the next request too.
    /// - Throws: a reason naming the offending part when the URL is not `http://host…`, or the
    ///   method or a header field would break the message (a line break in a value, say).
    ///   Header values are never quoted in the reason: they may be credentials.
    init(_ request: HTTPRequest, keepAlive: Bool = false) throws(HTTP1ResponseError) {
        guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .init("the URL's scheme is not http or https")
        }
        isSecure = scheme == "https"
        self.keepAlive = keepAlive
        self.isIdempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(request.method.uppercased())
        self.tls = request.tls ?? TLSConfiguration()
        guard var host = components.host, !host.isEmpty else { throw .init("the URL has no host") }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? (isSecure ? 443 : 80)
        guard (1...65_535).contains(port) else { throw .init("the URL's port \(port) is out of range") }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .init("the method \"\(request.method.prefix(20))\" is not an HTTP token")
        }
        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }
        guard !target.utf8.contains(where: { $0 <= 32 || $0 >= 127 }) else {
            throw .init("the URL's path or query has a space or control character")
        }

        let hostField = host.contains(":") ? "[\(host)]" : host
        var head = "\(request.method) \(target) HTTP/1.1\r\n"
        head += "Host: \(hostField)\(components.port.map { ":\($0)" } ?? "")\r\n"
        for field in request.headers where !Self.connectionFields.contains(field.name.lowercased()) {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .init("the header name \"\(field.name.prefix(40))\" is not an HTTP token")
            }
            guard !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw .init("the value of the header \(field.name) has a line break or NUL")
            }
            head += "\(field.name): \(field.value)\r\n"
        }
        let body = request.body ?? Data()
        if request.body != nil || ["POST", "PUT", "PATCH"].contains(request.method.uppercased()) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"

        var bytes = Array(head.utf8)
        bytes.append(contentsOf: body)
        self.host = host
        self.port = port
        self.bytes = bytes
        self.isHeadRequest = request.method.uppercased() == "HEAD"
        self.maxResponseBytes = min(request.maxResponseBytes ?? HTTP1ResponseReader.maxBodyBytes, HTTP1ResponseReader.maxBodyBytes)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
