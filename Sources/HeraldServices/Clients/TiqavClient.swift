import Foundation

/// A client of the Tiqav image search: random picks and text search, and the URLs of images
/// and thumbnails.
///
/// Throws only ``ServiceError``; a JSON object where the array was expected (a failure
/// the API is known for) is a `.decoding` error.
public struct TiqavClient: Sendable {
    /// The API root, e.g. `http://api.tiqav.com` or a sandbox URL.
    public var baseURL: URL
    /// Where images live, e.g. `http://img.tiqav.com` (the sandbox serves them at `/img`).
    public var imageBaseURL: URL
    /// Sends each request.
    public var transport: any HTTPTransport
    /// The deadline of each request; nil uses the transport's default.
    public var timeout: Duration?

    /// Creates a client.
    public init(baseURL: URL, imageBaseURL: URL, transport: any HTTPTransport, timeout: Duration? = nil) {
        self.baseURL = baseURL
        self.imageBaseURL = imageBaseURL
        self.transport = transport
        self.timeout = timeout
    }

    /// A handful of random images (`/search/random.json`).
    public func random() async throws -> [TiqavImage] {
        try await fetch(try URLBuilder.url(baseURL, path: "/search/random.json"))
    }

    /// Images matching `query` (`/search.json?q=`); nothing found (404) is an empty array.
    public func search(_ query: String) async throws -> [TiqavImage] {
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ServiceError.invalidRequest("an empty search query")
        }
        do {
            return try await fetch(try URLBuilder.url(baseURL, path: "/search.json", query: [("q", query)]))
        } catch let error as ServiceError where error.kind == .httpStatus && error.status == 404 {
            return []
        }
    }

    /// `{imageBaseURL}/<id>.<ext>`.
    public func imageURL(for image: TiqavImage) -> URL {
        image.imageURL(base: imageBaseURL)
    }

    /// `{imageBaseURL}/<id>.th.jpg`.
    public func thumbnailURL(for image: TiqavImage) -> URL {
        image.thumbnailURL(base: imageBaseURL)
    }

    /// Downloads an image or thumbnail's bytes.
    public func download(_ url: URL) async throws -> Data {
        try await transport.perform(HTTPRequest(url: url, timeout: timeout)).body
    }

    private func fetch(_ url: URL) async throws -> [TiqavImage] {
        let response = try await transport.perform(HTTPRequest(url: url, headers: ["Accept": "application/json"], timeout: timeout))
        return try JSONBodyDecoder.decode([TiqavImage].self, from: response)
    }
}
