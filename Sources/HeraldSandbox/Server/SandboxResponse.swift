import Foundation

/// One HTTP response the sandbox sends, with how to deliver it (faults included).
public struct SandboxResponse: Sendable {
    /// How the response reaches the wire.
    public enum Delivery: Sendable, Hashable {
        /// Written at once.
        case normal
        /// The connection is closed without any response.
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
    /// Whether the connection is closed after this response (`Connection: close`).
    var closesConnection = false
    /// Whether the server closes its idle keep-alive connections on receiving this response.
    var closesIdleConnections = false

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    static func json(_ status: Int, _ value: SandboxJSON, headers: [(name: String, value: String)] = []) -> SandboxResponse {
        SandboxResponse(
            status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
            body: Data(value.serialized().utf8))
    }

    /// A Twitter-style error: `{"errors":[{"code":N,"message":"…"}]}`.
    static func twitterError(_ status: Int, code: Int, _ message: String, headers: [(name: String, value: String)] = []) -> SandboxResponse {
        json(status, .object([("errors", .array([.object([("code", .int(Int64(code))), ("message", .string(message))])]))]), headers: headers)
    }

    /// Sets a header, replacing any of the same name.
    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    static let reasonPhrases: [Int: String] = [
        100: "Continue", 200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized",
        403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict",
        413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented",
        502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]
}
