import Foundation

extension HTTPTransport {
    /// Sends `request` and requires a 2xx answer.
    ///
    /// Any error that is not already a ``ServiceError`` becomes a `.transport` one, so clients
    /// throw only ``ServiceError``.
    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await send(request)
        } catch let error as ServiceError {
            throw error
        } catch is CancellationError {
            throw ServiceError.cancelled
        } catch {
            throw ServiceError.transport(String(describing: error))
        }
        return try ResponseValidation.requireSuccess(response)
    }
}

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
