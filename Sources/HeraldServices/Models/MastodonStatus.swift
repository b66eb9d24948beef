import Foundation

/// One Mastodon status: the parts of the API's Status entity Herald reads, and its content as
/// plain text.
///
/// Encoded (in events, the archive, templates) with the API's field names plus `text`, the
/// content as plain text: `id`, `created_at` (ISO 8601), `account`, `url`, `content` (HTML),
/// `text`, `visibility`, `spoiler_text`, `language`, `media_attachments`, `in_reply_to_id`.
public struct MastodonStatus: Sendable, Hashable, Codable, Identifiable {
    /// The id (a string: Mastodon's are numbers, other servers' need not be).
    public var id: String
    /// When it was posted.
    public var createdAt: Date
    /// The author.
    public var account: MastodonAccount
    /// The status's web page.
    public var url: String?
    /// The content as the server sent it: sanitised HTML.
    public var content: String
    /// The content as plain text (see ``MastodonHTML``).
    public var text: String
    /// `public`, `unlisted`, `private` or `direct`.
    public var visibility: String
    /// The content warning; empty when there is none.
    public var spoilerText: String
    /// The language (ISO 639), when known.
    public var language: String?
    /// The attachments.
    public var mediaAttachments: [MastodonMediaAttachment]
    /// The status this one replies to.
    public var inReplyToID: String?

    /// Creates a status; `text` defaults to the plain text of `content`.
    public init(id: String, createdAt: Date, account: MastodonAccount, url: String? = nil, content: String, text: String? = nil,
                visibility: String = "public", spoilerText: String = "", language: String? = nil,
                mediaAttachments: [MastodonMediaAttachment] = [], inReplyToID: String? = nil) {
        self.id = id
        self.createdAt = createdAt
        self.account = account
        self.url = url
        self.content = content
        self.text = text ?? MastodonHTML.plainText(content)
        self.visibility = visibility
        self.spoilerText = spoilerText
        self.language = language
        self.mediaAttachments = mediaAttachments
        self.inReplyToID = inReplyToID
    }

    enum CodingKeys: String, CodingKey {
        case id, createdAt = "created_at", account, url, content, text, visibility, spoilerText = "spoiler_text", language
        case mediaAttachments = "media_attachments", inReplyToID = "in_reply_to_id"
    }

    /// Decodes the API's shape (unknown fields ignored). `text` is the plain text of `content`;
    /// a `text` the server sent (the source text, on some answers) is used when present.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeFlexibleID(forKey: .id)
        let created = try container.decode(String.self, forKey: .createdAt)
        guard let date = ServiceDates.parseISO8601(created) else {
            throw DecodingError.dataCorruptedError(forKey: .createdAt, in: container, debugDescription: "not an ISO 8601 date: \(created)")
        }
        createdAt = date
        account = try container.decode(MastodonAccount.self, forKey: .account)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        content = try container.decodeIfPresent(String.self, forKey: .content) ?? ""
        if let given = try container.decodeIfPresent(String.self, forKey: .text), !given.isEmpty {
            text = given
        } else {
            text = MastodonHTML.plainText(content)
        }
        visibility = try container.decodeIfPresent(String.self, forKey: .visibility) ?? "public"
        spoilerText = try container.decodeIfPresent(String.self, forKey: .spoilerText) ?? ""
        language = try container.decodeIfPresent(String.self, forKey: .language)
        mediaAttachments = try container.decodeIfPresent([MastodonMediaAttachment].self, forKey: .mediaAttachments) ?? []
        inReplyToID = try? container.decodeFlexibleID(forKey: .inReplyToID)
    }

    /// Encodes the API's field names, `created_at` in ISO 8601 UTC with milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(ServiceDates.formatISO8601(createdAt), forKey: .createdAt)
        try container.encode(account, forKey: .account)
        try container.encode(url, forKey: .url)
        try container.encode(content, forKey: .content)
        try container.encode(text, forKey: .text)
        try container.encode(visibility, forKey: .visibility)
        try container.encode(spoilerText, forKey: .spoilerText)
        try container.encode(language, forKey: .language)
        try container.encode(mediaAttachments, forKey: .mediaAttachments)
        try container.encode(inReplyToID, forKey: .inReplyToID)
    }
}
