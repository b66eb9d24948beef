import Foundation
import HeraldServices

/// A webhook's JSON body with `{{field}}` placeholders in its strings.
///
/// Rendering builds a JSON value and serialises it, so no value can break the JSON: a string
/// with placeholders becomes a JSON string, escaped by the serialiser whatever it holds
/// (quotes, backslashes, line breaks, `</script>`); a string that is exactly one placeholder
/// (`"{{item.categories}}"`) takes the field's value as it is (a number, an array, an object).
/// A field that is absent or null renders as an empty string inside text and as `null` alone:
/// feed items often lack an author or a summary, and a notification should still go out (the
/// config check refuses fields the event can never have). Keys are sorted, so one event always
/// gives the same bytes.
public struct WebhookBodyTemplate: Sendable, Hashable {
    /// The body as written.
    public let source: JSONValue
    private let root: Node

    private indirect enum Node: Sendable, Hashable {
        case value(JSONValue)
        case text(PostTemplate)
        case field(FieldPath)
        case array([Node])
        case object([String: Node])
    }

    /// Reads a body template: any JSON value, its strings read as templates.
    /// - Throws: ``PostTemplateError`` for a malformed placeholder.
    public init(_ source: JSONValue) throws(PostTemplateError) {
        self.source = source
        self.root = try Self.node(source)
    }

    private static func node(_ value: JSONValue) throws(PostTemplateError) -> Node {
        switch value {
        case .string(let text):
            let template = try PostTemplate(text)
            if template.parts.count == 1, case .field(let path) = template.parts[0] { return .field(path) }
            return template.fieldPaths.isEmpty ? .value(value) : .text(template)
        case .array(let items):
            var nodes: [Node] = []
            for item in items { nodes.append(try node(item)) }
            return .array(nodes)
        case .object(let fields):
            var nodes: [String: Node] = [:]
            for (key, field) in fields { nodes[key] = try node(field) }
            return .object(nodes)
        default:
            return .value(value)
        }
    }

    /// The field paths it reads, in key order.
    public var fieldPaths: [FieldPath] {
        func paths(_ node: Node) -> [FieldPath] {
            switch node {
            case .value: []
            case .text(let template): template.fieldPaths
            case .field(let path): [path]
            case .array(let items): items.flatMap(paths)
            case .object(let fields): fields.keys.sorted().flatMap { fields[$0].map(paths) ?? [] }
            }
        }
        return paths(root)
    }

    /// The body for `context`, as compact JSON text.
    public func render(_ context: PostContext) -> String {
        let value = Self.render(root, context)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    private static func render(_ node: Node, _ context: PostContext) -> JSONValue {
        switch node {
        case .value(let value): return value
        case .field(let path): return context.value(at: path) ?? .null
        case .text(let template):
            var text = ""
            for part in template.parts {
                switch part {
                case .literal(let literal): text += literal
                case .field(let path):
                    if let value = context.value(at: path), value != .null { text += PostTemplate.text(of: value) }
                }
            }
            return .string(text)
        case .array(let items): return .array(items.map { render($0, context) })
        case .object(let fields): return .object(fields.mapValues { render($0, context) })
        }
    }
}
