import Foundation

/// One status (tweet) of a timeline.
public struct Status: Sendable, Hashable, Codable, Identifiable {
    /// The status id as a string (`id_str`): ids exceed 2^53.
    public var id: String
    /// When it was posted.
    public var createdAt: Date
    /// The text, entities decoded.
    public var text: String
    /// The author.
    public var user: TwitterUser
    /// The status this one replies to, if any.
    public var inReplyToStatusID: String?

    /// Creates a status.
    public init(id: String, createdAt: Date, text: String, user: TwitterUser, inReplyToStatusID: String? = nil) {
        self.id = id
        self.createdAt = createdAt
        self.text = text
        self.user = user
        self.inReplyToStatusID = inReplyToStatusID
    }

    enum CodingKeys: String, CodingKey {
        case id, idString = "id_str", createdAt = "created_at", text, fullText = "full_text", user
        case inReplyToStatusIDString = "in_reply_to_status_id_str"
    }

    /// Decodes the service's JSON shape; unknown fields are ignored.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIdentifier(stringKey: .idString, numberKey: .id)
        let created = try container.decode(String.self, forKey: .createdAt)
        guard let date = ServiceDates.parseTwitter(created) else {
            throw DecodingError.dataCorruptedError(
                forKey: .createdAt, in: container, debugDescription: "not a Twitter date: \(created)")
        }
        createdAt = date
        if let full = try container.decodeIfPresent(String.self, forKey: .fullText) {
            text = full
        } else {
            text = try container.decode(String.self, forKey: .text)
        }
        user = try container.decode(TwitterUser.self, forKey: .user)
        inReplyToStatusID = try container.decodeIfPresent(String.self, forKey: .inReplyToStatusIDString)
    }

    /// Encodes the service's JSON shape (`id_str`, Twitter date).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .idString)
        try container.encode(ServiceDates.formatTwitter(createdAt), forKey: .createdAt)
        try container.encode(text, forKey: .text)
        try container.encode(user, forKey: .user)
        try container.encodeIfPresent(inReplyToStatusID, forKey: .inReplyToStatusIDString)
    }
}
