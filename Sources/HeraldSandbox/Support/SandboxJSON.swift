import Foundation

/// The sandbox's own JSON value and writer: keys keep their order, and integers are written
/// exactly (status ids exceed 2^53, which a Double would round).
enum SandboxJSON: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([SandboxJSON])
    case object([(String, SandboxJSON)])

    static func == (lhs: SandboxJSON, rhs: SandboxJSON) -> Bool { lhs.serialized() == rhs.serialized() }
    func hash(into hasher: inout Hasher) { hasher.combine(serialized()) }

    init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var items: [SandboxJSON] = []
            while !list.isAtEnd { items.append(try list.decode(SandboxJSON.self)) }
            self = .array(items)
            return
        }
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            self = .object(try keyed.allKeys.sorted { $0.stringValue < $1.stringValue }.map {
                ($0.stringValue, try keyed.decode(SandboxJSON.self, forKey: $0))
            })
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let value = try? single.decode(Bool.self) { self = .bool(value) }
        else if let value = try? single.decode(Int64.self) { self = .int(value) }
        else if let value = try? single.decode(Double.self) { self = .double(value) }
        else { self = .string(try single.decode(String.self)) }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Parses JSON text; nil when it is not JSON.
    static func parse(_ data: Data) -> SandboxJSON? {
        try? JSONDecoder().decode(SandboxJSON.self, from: data)
    }

    subscript(key: String) -> SandboxJSON? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// A comparable rendering for sorting: numbers as numbers, the rest as text.
    var sortKey: (Double?, String) {
        switch self {
        case .int(let value): return (Double(value), "")
        case .uint(let value): return (Double(value), "")
        case .double(let value): return (value, "")
        case .string(let value): return (nil, value)
        case .bool(let value): return (value ? 1 : 0, "")
        default: return (nil, serialized())
        }
    }

    func serialized() -> String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .uint(let value): output += String(value)
        case .double(let value): output += value.isFinite ? "\(value)" : "null"
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                item.write(to: &output)
            }
            output += "]"
        case .object(let pairs):
            output += "{"
            for (index, pair) in pairs.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(pair.0, to: &output)
                output += ":"
                pair.1.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
