/// The validators of a feed's last answer, sent back on the next request.
public struct FeedValidators: Sendable, Hashable, Codable {
    /// The longest validator kept (a longer one is not sent back).
    public static let limit = 256

    /// `ETag`, sent as `If-None-Match`.
    public var etag: String?
    /// `Last-Modified`, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// Creates validators.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Without values that are too long or could break a header line.
    public var bounded: FeedValidators {
        func keep(_ value: String?) -> String? {
            guard let value, !value.isEmpty, value.utf8.count <= Self.limit,
                  value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            return value
        }
        return FeedValidators(etag: keep(etag), lastModified: keep(lastModified))
    }
}
