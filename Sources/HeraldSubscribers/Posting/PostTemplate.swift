import Foundation
import HeraldServices

/// A post's text with `{{field.path}}` placeholders, filled from the triggering event (and the
/// new item, for rules that post once per new item).
///
/// A path is dot-separated keys into the event's JSON form (`loader`, `newTodos.0.description`);
/// a number selects an array element. `item.` and `event.` say where to look explicitly;
/// otherwise a path is looked up in the item first (when there is one), then in the event.
/// `{{topic}}` is the event's topic. Strings are inserted as they are, numbers without a
/// trailing `.0`, booleans as `true` / `false`, arrays and objects as compact JSON.
public struct PostTemplate: Sendable, Hashable, CustomStringConvertible {
    enum Part: Sendable, Hashable {
        case literal(String)
        case field(FieldPath)
    }

    /// The template as written.
    public let source: String
    let parts: [Part]

    /// Parses a template.
    ///
    /// - Throws: ``PostTemplateError`` for an unclosed `{{` or an empty placeholder, with the
    ///   character offset.
    public init(_ source: String) throws(PostTemplateError) {
        self.source = source
        var parts: [Part] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<open.lowerBound]))) }
            let offset = source.distance(from: source.startIndex, to: open.lowerBound)
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw PostTemplateError(template: source, offset: offset, reason: "\"{{\" is never closed by \"}}\"")
            }
            let inner = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            guard let path = FieldPath(inner) else {
                throw PostTemplateError(template: source, offset: offset,
                                        reason: inner.isEmpty ? "empty placeholder" : "\"\(inner)\" is not a field path")
            }
            parts.append(.field(path))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
    }

    /// The field paths it uses, in order.
    public var fieldPaths: [FieldPath] {
        parts.compactMap { if case .field(let path) = $0 { path } else { nil } }
    }

    /// The text with every placeholder filled.
    ///
    /// - Throws: ``PostRenderError`` naming the first field that is missing or null.
    public func render(_ context: PostContext) throws(PostRenderError) -> String {
        var text = ""
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .field(let path):
                guard let value = context.value(at: path), value != .null else {
                    throw PostRenderError(field: path.description, template: source)
                }
                text += Self.text(of: value)
            }
        }
        return text
    }

    /// A value as it appears in a post.
    static func text(of value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let string): return string
        case .integer(let number): return String(number)
        case .unsigned(let number): return String(number)
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .array, .object:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(value)).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        }
    }

    public var description: String { source }
}

/// A dot-separated path into an event's JSON form: `item.description`, `newTodos.0.id`.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    /// The keys (and array indices, as decimal text).
    public let keys: [String]

    /// Parses `a.b.0.c`; nil for an empty path, an empty key or a key with spaces or braces.
    public init?(_ text: some StringProtocol) {
        let keys = String(text).split(separator: Character("."), omittingEmptySubsequences: false).map(String.init)
        guard !keys.isEmpty, keys.allSatisfy({ key in
            !key.isEmpty && !key.contains(where: { $0.isWhitespace || $0 == "{" || $0 == "}" })
        }) else { return nil }
        self.keys = keys
    }

    public var description: String { keys.joined(separator: ".") }
}

/// A template that cannot be parsed.
public struct PostTemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The template.
    public var template: String
    /// Where the problem starts (characters from the start).
    public var offset: Int
    /// What is wrong.
    public var reason: String

    public var description: String { "\(reason) at character \(offset + 1) of \"\(template)\"" }
}

/// A template whose field is absent from the event.
public struct PostRenderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The missing field's path.
    public var field: String
    /// The template.
    public var template: String

    public var description: String { "the event has no field \"\(field)\" (template \"\(template)\")" }
}

/// What templates and conditions read: the event's JSON form, the new item when the rule posts
/// per item, and the topic.
public struct PostContext: Sendable, Hashable {
    /// The event as JSON (its `Codable` form, dates in ISO 8601).
    public var event: JSONValue
    /// The new item, for rules with `for: new`.
    public var item: JSONValue?
    /// The event's topic.
    public var topic: String

    /// Creates a context.
    public init(event: JSONValue, item: JSONValue? = nil, topic: String) {
        self.event = event
        self.item = item
        self.topic = topic
    }

    /// The value at `path` (see ``PostTemplate`` for where paths are looked up).
    public func value(at path: FieldPath) -> JSONValue? {
        var keys = path.keys[...]
        switch keys.first {
        case "item":
            guard let item else { return nil }
            return Self.lookup(keys.dropFirst(), in: item)
        case "event":
            return Self.lookup(keys.dropFirst(), in: event)
        case "topic" where keys.count == 1:
            return .string(topic)
        default:
            if let item, let found = Self.lookup(keys, in: item) { return found }
            keys = path.keys[...]
            return Self.lookup(keys, in: event)
        }
    }

    static func lookup(_ keys: ArraySlice<String>, in value: JSONValue) -> JSONValue? {
        var current = value
        for key in keys {
            switch current {
            case .object(let fields):
                guard let next = fields[key] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}
