import Foundation
import HeraldServices
import HeraldSubscribers
import Testing

/// A webhook body is built as JSON, so no value can break it.
@Suite struct WebhookBodyTemplateTests {
    static let nasty = ["\"}, \"injected\": true, \"x\": {\"", "back\\slash", "line\nbreak\r\ttab", "</script><!--", "\u{0}\u{1}\u{1F}",
                        "😀 日本語", "{{not a placeholder}}", "\u{2028}\u{2029}", String(repeating: "\"", count: 100)]

    static func context(_ title: String) -> PostContext {
        PostContext(event: .object(["title": .string("Feed"), "itemCount": .number(3)]),
                    item: .object(["title": .string(title), "categories": .array([.string("a"), .string(title)]), "author": .null]),
                    topic: "loader.news.finished")
    }

    @Test(arguments: nasty)
    func everyValueStaysInsideItsString(value: String) throws {
        let template = try WebhookBodyTemplate(.object([
            "text": .string("New: {{item.title}} ({{event.title}})"),
            "blocks": .array([.object(["type": .string("section"), "text": .string("*{{item.title}}*")])]),
            "tags": .string("{{item.categories}}"), "count": .string("{{itemCount}}"), "fixed": .number(1.5),
        ]))
        let body = template.render(Self.context(value))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
        #expect(parsed.keys.sorted() == ["blocks", "count", "fixed", "tags", "text"])
        #expect(parsed["text"] as? String == "New: \(value) (Feed)")
        #expect(((parsed["blocks"] as? [[String: Any]])?.first?["text"] as? String) == "*\(value)*")
        #expect(parsed["tags"] as? [String] == ["a", value])
        #expect(parsed["count"] as? Int == 3 && parsed["fixed"] as? Double == 1.5)
    }

    @Test func absentAndNullFieldsRenderEmptyInTextAndNullAlone() throws {
        let template = try WebhookBodyTemplate(.object(["by": .string("by {{item.author}}{{item.missing}}"), "author": .string("{{item.author}}")]))
        #expect(template.render(Self.context("t")) == #"{"author":null,"by":"by "}"#)
    }

    @Test func theSameEventRendersTheSameBytes() throws {
        let template = try WebhookBodyTemplate(.object(["z": .string("{{item.title}}"), "a": .string("x"), "m": .object(["k": .bool(true)])]))
        #expect(template.render(Self.context("t")) == template.render(Self.context("t")))
        #expect(template.render(Self.context("t")) == #"{"a":"x","m":{"k":true},"z":"t"}"#)
    }

    @Test func aMalformedPlaceholderIsRefused() {
        #expect(throws: PostTemplateError.self) { try WebhookBodyTemplate(.object(["text": .string("{{item.title")])) }
        #expect(throws: PostTemplateError.self) { try WebhookBodyTemplate(.array([.string("{{}}")])) }
    }
}
