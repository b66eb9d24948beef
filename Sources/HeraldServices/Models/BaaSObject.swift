import Foundation

/// One object of an NEC BaaS bucket: the system fields and the application's own fields.
public struct BaaSObject: Sendable, Hashable, Codable, Identifiable {
    /// The object id (`_id`).
    public var id: String
    /// When it was created (`createdAt`, ISO 8601 with milliseconds).
    public var createdAt: Date?
    /// When it was last updated (`updatedAt`).
    public var updatedAt: Date?
    /// The version tag to pass to an update or delete (`etag`).
    public var etag: String?
    /// Every other field, e.g. `description` for the todo tutorial.
    public var fields: [String: JSONValue]

    /// Creates an object.
    public init(id: String, createdAt: Date? = nil, updatedAt: Date? = nil, etag: String? = nil, fields: [String: JSONValue] = [:]) {
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.etag = etag
        self.fields = fields
    }

    /// The `description` field of a todo item.
    public var todoDescription: String? { fields["description"]?.stringValue }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let systemKeys: Set<String> = ["_id", "createdAt", "updatedAt", "etag", "ACL", "createdBy"]

    /// Decodes the service's shape.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        id = try container.decode(String.self, forKey: Key("_id"))
        createdAt = try Self.decodeDate(container, "createdAt")
        updatedAt = try Self.decodeDate(container, "updatedAt")
        etag = try container.decodeIfPresent(String.self, forKey: Key("etag"))
        var fields: [String: JSONValue] = [:]
        for key in container.allKeys where !Self.systemKeys.contains(key.stringValue) {
            fields[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        self.fields = fields
    }

    private static func decodeDate(_ container: KeyedDecodingContainer<Key>, _ name: String) throws -> Date? {
        guard let text = try container.decodeIfPresent(String.self, forKey: Key(name)) else { return nil }
        guard let date = ServiceDates.parseISO8601(text) else {
            throw DecodingError.dataCorruptedError(forKey: Key(name), in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        return date
    }

    /// Encodes the service's shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: Key("_id"))
        try container.encodeIfPresent(createdAt.map(ServiceDates.formatISO8601), forKey: Key("createdAt"))
        try container.encodeIfPresent(updatedAt.map(ServiceDates.formatISO8601), forKey: Key("updatedAt"))
        try container.encodeIfPresent(etag, forKey: Key("etag"))
        for (key, value) in fields { try container.encode(value, forKey: Key(key)) }
    }
}
