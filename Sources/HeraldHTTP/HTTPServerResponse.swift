import Foundation

/// One HTTP response an ``HTTPServer`` sends, with how to deliver it.
public struct HTTPServerResponse: Sendable {
    /// How the response reaches the wire.
    public enum Delivery: Sendable, Hashable {
        /// Written at once.
        case normal
        /// The connection is closed without any response (a fault a test server injects).
        case drop
        /// The body is written `chunkSize` bytes at a time with a pause between writes.
        case drip(chunkSize: Int, pause: Duration)
    }

    /// The status code.
    public var status: Int
    /// The header fields (Content-Length and Connection are added when writing).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data
    /// How to deliver it.
    public var delivery: Delivery = .normal
    /// A pause before anything is written.
    public var delay: Duration = .zero
    /// A body written as it is produced, instead of ``body``: see ``HTTPResponseStream``.
    public var stream: HTTPResponseStream?
    /// Whether the connection is closed after this response (`Connection: close`).
    public var closesConnection = false
    /// Whether the server closes its idle keep-alive connections on receiving this response.
    public var closesIdleConnections = false

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Data(text.utf8))
    }

    /// `{"error": reason}` as `application/json`: how the server itself refuses a request.
    public static func error(_ status: Int, _ reason: String, headers: [(name: String, value: String)] = []) -> HTTPServerResponse {
        let body = (try? JSONSerialization.data(withJSONObject: ["error": reason], options: [.withoutEscapingSlashes])) ?? Data()
        return HTTPServerResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: body)
    }

    /// A response streamed by `stream`, the connection closing when it ends.
    public static func streaming(_ status: Int = 200, headers: [(name: String, value: String)], _ stream: HTTPResponseStream) -> HTTPServerResponse {
        var response = HTTPServerResponse(status: status, headers: headers)
        response.stream = stream
        response.closesConnection = true
        return response
    }

    /// Sets a header, replacing any of the same name.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    /// The reason phrase of each status the server writes (others are written `Status`).
    public static let reasonPhrases: [Int: String] = [
        100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
        400: "Bad Request", 401: "Unauthorized", 422: "Unprocessable Content",
        403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict",
        413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented",
        502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]
}
