/// Any JSON value, with whole numbers kept exact: the free-form fields of BaaS objects, the
/// event bodies other nodes publish (status ids exceed 2^53, so a `Double` would change them),
/// post templates and `config.json`.
///
/// Numbers compare (and hash) by value, whichever case holds them: `.integer(3)`,
/// `.unsigned(3)` and `.number(3.0)` are equal, so a value built in code matches the same value
/// decoded from text.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number that fits 64 signed bits.
    case integer(Int64)
    /// A whole number above `Int64.max`.
    case unsigned(UInt64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes whichever JSON value is present, whole numbers first.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsigned(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as a `Double` (rounded when a whole number needs more than 53 bits), if this
    /// is one.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .unsigned(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// The member `key` of an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    /// Equal values: numbers by value, whichever case holds them.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default:
            if let a = lhs.exactNumber, let b = rhs.exactNumber { a == b } else { false }
        }
    }

    /// Hashes numbers by value, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .string(let value): hasher.combine(2); hasher.combine(value)
        case .array(let value): hasher.combine(3); hasher.combine(value)
        case .object(let value): hasher.combine(4); hasher.combine(value)
        case .integer, .unsigned, .number:
            hasher.combine(5)
            switch exactNumber {
            case .signed(let value)?: hasher.combine(value)
            case .unsigned(let value)?: hasher.combine(value)
            case .fraction(let value)?: hasher.combine(value)
            case nil: break
            }
        }
    }

    /// A number in one canonical form: whole numbers as `Int64` when they fit, else `UInt64`,
    /// else a `Double`.
    private enum ExactNumber: Equatable {
        case signed(Int64)
        case unsigned(UInt64)
        case fraction(Double)
    }

    private var exactNumber: ExactNumber? {
        switch self {
        case .integer(let value): return .signed(value)
        case .unsigned(let value): return Int64(exactly: value).map(ExactNumber.signed) ?? .unsigned(value)
        case .number(let value):
            if let whole = Int64(exactly: value) { return .signed(whole) }
            if let whole = UInt64(exactly: value) { return .unsigned(whole) }
            return .fraction(value)
        default: return nil
        }
    }
}
