import Foundation

/// A JSON value as read from `config.json`, keeping integers, numbers and booleans apart so
/// validation can say exactly what was found.
enum ConfigJSON: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ConfigJSON])
    case object([String: ConfigJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ConfigJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ConfigJSON].self))
        }
    }

    /// How the value is described in an error: the value itself when short, else its type.
    var shown: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
        case .string(let value): value.count <= 40 ? "\"\(value)\"" : "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
