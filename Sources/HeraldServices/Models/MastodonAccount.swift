/// The author of a Mastodon status (the parts Herald uses of the API's Account entity).
public struct MastodonAccount: Sendable, Hashable, Codable {
    /// The account's id on the server (a string: not necessarily a number).
    public var id: String
    /// The user name without the domain.
    public var username: String
    /// `username` for a local account, `username@domain` for a remote one.
    public var acct: String
    /// The display name (may be empty; may hold custom emoji shortcodes).
    public var displayName: String
    /// The profile's web address.
    public var url: String?

    /// Creates an account.
    public init(id: String, username: String, acct: String, displayName: String = "", url: String? = nil) {
        self.id = id
        self.username = username
        self.acct = acct
        self.displayName = displayName
        self.url = url
    }

    enum CodingKeys: String, CodingKey {
        case id, username, acct, displayName = "display_name", url
    }

    /// Decodes the API's shape leniently: a missing `username` or `display_name` is empty, a
    /// numeric `id` (some servers) is read as its digits.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeFlexibleID(forKey: .id)
        acct = try container.decode(String.self, forKey: .acct)
        username = try container.decodeIfPresent(String.self, forKey: .username) ?? String(acct.prefix { $0 != "@" })
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName) ?? ""
        url = try container.decodeIfPresent(String.self, forKey: .url)
    }
}

extension KeyedDecodingContainer {
    /// An id written as a string, or as a whole number (read exactly, as its digits).
    func decodeFlexibleID(forKey key: Key) throws -> String {
        if let text = try? decode(String.self, forKey: key) {
            guard !text.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "an empty id")
            }
            return text
        }
        if let number = try? decode(UInt64.self, forKey: key) { return String(number) }
        throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected an id (a string)")
    }
}
