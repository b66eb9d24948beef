import Foundation

/// Joins a base URL and a path and query without Foundation re-encoding anything.
enum URLBuilder {
    /// `base` + `/` + `path` (slashes deduplicated) + `?query` encoded with RFC 3986.
    static func url(_ base: URL, path: String, query: [(String, String)] = []) throws -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path.hasPrefix("/") ? path : "/" + path
        if !query.isEmpty { text += "?" + FormBody.encode(query) }
        guard let url = URL(string: text) else { throw ServiceError.invalidRequest("cannot build a URL from \(text)") }
        return url
    }
}
