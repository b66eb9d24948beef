import Foundation

/// One Tiqav search result.
public struct TiqavImage: Sendable, Hashable, Codable, Identifiable {
    /// The short image id, e.g. `3om`.
    public var id: String
    /// The file extension, e.g. `jpg`.
    public var ext: String
    /// The width in pixels, when known.
    public var width: Int?
    /// The height in pixels, when known.
    public var height: Int?
    /// Where the image was found, when known.
    public var sourceURL: String?

    /// Creates an image record.
    public init(id: String, ext: String, width: Int? = nil, height: Int? = nil, sourceURL: String? = nil) {
        self.id = id
        self.ext = ext
        self.width = width
        self.height = height
        self.sourceURL = sourceURL
    }

    enum CodingKeys: String, CodingKey {
        case id, ext, width, height, sourceURL = "source_url"
    }

    /// `{imageBase}/<id>.<ext>`.
    public func imageURL(base: URL) -> URL {
        base.appendingPathComponent("\(id).\(ext)")
    }

    /// `{imageBase}/<id>.th.jpg`.
    public func thumbnailURL(base: URL) -> URL {
        base.appendingPathComponent("\(id).th.jpg")
    }
}
