import HeraldServices

/// A JSON value as read from `config.json`: the services' `JSONValue`, which keeps numbers,
/// booleans and strings apart so validation can say exactly what was found.
typealias ConfigJSON = JSONValue

extension JSONValue {
    /// How the value is described in an error: the value itself when short, else its type.
    var shown: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .unsigned(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
        case .string(let value): value.count <= 40 ? "\"\(value)\"" : "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value's type, for errors about secrets, whose values are never shown.
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .unsigned, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
