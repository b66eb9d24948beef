/// The author of a status, as the Twitter-style API describes it.
public struct TwitterUser: Sendable, Hashable, Codable {
    /// The user id as a string (`id_str`): ids exceed 2^53.
    public var id: String
    /// The display name.
    public var name: String
    /// The handle, without `@`.
    public var screenName: String

    /// Creates a user.
    public init(id: String, name: String, screenName: String) {
        self.id = id
        self.name = name
        self.screenName = screenName
    }

    enum CodingKeys: String, CodingKey {
        case id, idString = "id_str", name, screenName = "screen_name"
    }

    /// Decodes the service's shape: `id_str` preferred, a numeric `id` accepted.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIdentifier(stringKey: .idString, numberKey: .id)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? ""
        screenName = try container.decodeIfPresent(String.self, forKey: .screenName) ?? ""
    }

    /// Encodes the service's shape with `id_str`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .idString)
        try container.encode(name, forKey: .name)
        try container.encode(screenName, forKey: .screenName)
    }
}

extension KeyedDecodingContainer {
    /// An id from its string key, or else from its numeric key read exactly as `UInt64`.
    func decodeIdentifier(stringKey: Key, numberKey: Key) throws -> String {
        if let text = try decodeIfPresent(String.self, forKey: stringKey) {
            guard !text.isEmpty, text.allSatisfy(\.isNumber) else {
                throw DecodingError.dataCorruptedError(forKey: stringKey, in: self, debugDescription: "not a numeric id: \(text)")
            }
            return text
        }
        return String(try decode(UInt64.self, forKey: numberKey))
    }
}
