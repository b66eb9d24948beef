/// A media attachment of a Mastodon status, or one just uploaded.
public struct MastodonMediaAttachment: Sendable, Hashable, Codable {
    /// The attachment's id (what `media_ids[]` names).
    public var id: String
    /// `image`, `gifv`, `video`, `audio` or `unknown`.
    public var type: String
    /// The processed file; nil while the server is still processing it.
    public var url: String?
    /// A smaller preview.
    public var previewURL: String?
    /// The alt text.
    public var description: String?

    /// Creates an attachment.
    public init(id: String, type: String, url: String?, previewURL: String? = nil, description: String? = nil) {
        self.id = id
        self.type = type
        self.url = url
        self.previewURL = previewURL
        self.description = description
    }

    enum CodingKeys: String, CodingKey {
        case id, type, url, previewURL = "preview_url", description
    }

    /// Decodes the API's shape; a missing `type` is `unknown`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeFlexibleID(forKey: .id)
        type = try container.decodeIfPresent(String.self, forKey: .type) ?? "unknown"
        url = try container.decodeIfPresent(String.self, forKey: .url)
        previewURL = try container.decodeIfPresent(String.self, forKey: .previewURL)
        description = try container.decodeIfPresent(String.self, forKey: .description)
    }

    /// Whether the server has finished processing it (its `url` is set).
    public var isProcessed: Bool { url.map { !$0.isEmpty } ?? false }
}
