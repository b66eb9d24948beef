import Foundation

/// A user as X API v2 describes it (`data` of `GET /2/users/me`, an element of `includes.users`).
public struct XUser: Sendable, Hashable, Decodable {
    /// The user id (a string: ids exceed 2^53).
    public var id: String
    /// The display name.
    public var name: String
    /// The handle, without `@`.
    public var username: String

    /// Creates a user.
    public init(id: String, name: String, username: String) {
        self.id = id
        self.name = name
        self.username = username
    }

    enum CodingKeys: String, CodingKey { case id, name, username }

    /// Decodes the v2 shape; `name` and `username` may be missing (an id-only reference).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeXIdentifier(.id)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? ""
        username = try container.decodeIfPresent(String.self, forKey: .username) ?? ""
    }
}

/// One post (tweet) of an X API v2 answer, with the fields Herald asks for
/// (`tweet.fields=created_at,author_id,referenced_tweets`).
public struct XPost: Sendable, Hashable, Decodable {
    /// A post this one refers to (`referenced_tweets`).
    public struct Reference: Sendable, Hashable, Decodable {
        /// `replied_to`, `quoted` or `retweeted`.
        public var type: String
        /// The referenced post's id.
        public var id: String
    }

    /// The post id.
    public var id: String
    /// The text.
    public var text: String
    /// The author's id, when `author_id` was asked for.
    public var authorID: String?
    /// When it was posted, when `created_at` was asked for.
    public var createdAt: Date?
    /// The posts it refers to.
    public var references: [Reference]

    /// Creates a post.
    public init(id: String, text: String, authorID: String? = nil, createdAt: Date? = nil, references: [Reference] = []) {
        self.id = id
        self.text = text
        self.authorID = authorID
        self.createdAt = createdAt
        self.references = references
    }

    enum CodingKeys: String, CodingKey {
        case id, text, authorID = "author_id", createdAt = "created_at", references = "referenced_tweets"
    }

    /// Decodes the v2 shape; `created_at` is ISO 8601 (`2021-01-06T18:40:40.000Z`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeXIdentifier(.id)
        text = try container.decode(String.self, forKey: .text)
        authorID = try container.decodeIfPresent(String.self, forKey: .authorID)
        if let created = try container.decodeIfPresent(String.self, forKey: .createdAt) {
            guard let date = XDates.parse(created) else {
                throw DecodingError.dataCorruptedError(forKey: .createdAt, in: container,
                                                       debugDescription: "not an ISO 8601 date: \(created)")
            }
            createdAt = date
        }
        references = try container.decodeIfPresent([Reference].self, forKey: .references) ?? []
    }

    /// The post this one answers, if any.
    public var inReplyToID: String? { references.first { $0.type == "replied_to" }?.id }
}

/// One page of an X API v2 timeline or search: the posts newest first, their authors, and the
/// page's `meta`.
public struct XTimelinePage: Sendable, Hashable {
    /// The posts as the service sent them (newest first).
    public var posts: [XPost]
    /// The authors (`includes.users`), by id.
    public var users: [String: XUser]
    /// `meta.next_token`: there are older posts on the next page.
    public var nextToken: String?
    /// `meta.newest_id`.
    public var newestID: String?
    /// `meta.result_count`.
    public var resultCount: Int?
    /// The `x-rate-limit-*` state, when the service sent it.
    public var rateLimit: RateLimit?

    /// The posts as ``Status`` values (the shape the timeline loaders announce), each with its
    /// author from `includes.users` (id only when the service did not include the author).
    /// A post without `created_at` gets `fallbackDate`.
    public func statuses(fallbackDate: Date) -> [Status] {
        posts.map { post in
            let author = post.authorID.flatMap { users[$0] }
            let user = TwitterUser(id: author?.id ?? post.authorID ?? "0", name: author?.name ?? "", screenName: author?.username ?? "")
            return Status(id: post.id, createdAt: post.createdAt ?? fallbackDate, text: post.text, user: user,
                          inReplyToStatusID: post.inReplyToID)
        }
    }
}

/// A post X API v2 created (`data` of `POST /2/tweets`).
public struct XCreatedPost: Sendable, Hashable, Decodable {
    /// The new post's id.
    public var id: String
    /// Its text as the service stored it.
    public var text: String

    enum CodingKeys: String, CodingKey { case id, text }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeXIdentifier(.id)
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
    }
}

/// The wire shape of a timeline page.
struct XTimelineBody: Decodable {
    struct Includes: Decodable { var users: [XUser]? }
    struct Meta: Decodable {
        var nextToken: String?
        var newestID: String?
        var resultCount: Int?
        enum CodingKeys: String, CodingKey { case nextToken = "next_token", newestID = "newest_id", resultCount = "result_count" }
    }
    var data: [XPost]?
    var includes: Includes?
    var meta: Meta?
}

/// `{"data": T}`.
struct XDataBody<T: Decodable>: Decodable {
    var data: T
}

/// ISO 8601 dates as X API v2 writes them, with or without milliseconds.
enum XDates {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension KeyedDecodingContainer {
    /// A v2 id: a string of decimal digits (a bare number is accepted exactly as `UInt64`).
    func decodeXIdentifier(_ key: Key) throws -> String {
        if let text = try? decode(String.self, forKey: key) {
            guard !text.isEmpty, text.utf8.count <= 19, text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a numeric id: \(text)")
            }
            return text
        }
        return String(try decode(UInt64.self, forKey: key))
    }
}
