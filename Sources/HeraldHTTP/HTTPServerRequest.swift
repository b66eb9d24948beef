import Foundation

/// One HTTP request as an ``HTTPServer`` received it.
public struct HTTPServerRequest: Sendable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The path as sent, still percent-encoded (OAuth signs it that way); of a target in the
    /// absolute form (`http://host/path`), its path. `CONNECT`'s `host:port` and `OPTIONS`'s
    /// `*` are here as sent.
    public var rawPath: String
    /// The query as sent, without `?`; empty when there was none.
    public var rawQuery: String
    /// The header fields in order.
    public var headers: [(name: String, value: String)]
    /// The decoded body (chunked transfer already undone).
    public var body: Data
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    public var version: String = "HTTP/1.1"

    /// A request from its parts (for tests of handlers).
    public init(method: String, rawPath: String, rawQuery: String = "", headers: [(name: String, value: String)] = [],
                body: Data = Data(), version: String = "HTTP/1.1") {
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.headers = headers
        self.body = body
        self.version = version
    }

    /// The first value of a header, any case.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The path percent-decoded.
    public var path: String { rawPath.removingPercentEncoding ?? rawPath }

    /// The query parameters, decoded (`+` as a space), in order; a name may repeat.
    public var queryItems: [(String, String)] { FormCodec.decode(rawQuery) }

    /// The first query parameter named `name`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.0 == name }?.1
    }

    /// The form body parameters when the body is `application/x-www-form-urlencoded`.
    public var formItems: [(String, String)] {
        guard header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else { return [] }
        return FormCodec.decode(String(decoding: body, as: UTF8.self))
    }

    /// Whether the client asked to close the connection after this exchange.
    /// HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes unless told to keep it.
    public var wantsClose: Bool {
        let connection = header("Connection")?.lowercased() ?? ""
        if version == "HTTP/1.0" { return !connection.contains("keep-alive") }
        return connection.contains("close")
    }
}
