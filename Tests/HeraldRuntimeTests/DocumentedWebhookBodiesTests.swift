import Foundation
import HeraldLoaders
import HeraldRuntime
import HeraldServices
import HeraldSubscribers
import Testing

/// The ready-made Slack and Discord bodies of Documentation/Services.md, as written there: valid
/// in a config, and rendered for a feed item into the JSON each service takes.
@Suite struct DocumentedWebhookBodiesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `json` block of Services.md that holds `marker`, as an object (the block is a fragment
    /// of a config: `"services": …, "rules": …`).
    static func documentedBlock(holding marker: String) throws -> [String: Any] {
        let text = try String(contentsOf: root.appendingPathComponent("Documentation/Services.md"), encoding: .utf8)
        let blocks = text.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        let block = try #require(blocks.first { $0.contains(marker) }, "no json block in Services.md holds \(marker)")
        return try #require(try JSONSerialization.jsonObject(with: Data("{\(block)}".utf8)) as? [String: Any], "\(block)")
    }

    /// A config of the documented block: its services and rules, and the feed loader they name.
    static func configuration(_ block: [String: Any]) throws -> HeraldConfiguration {
        let object: [String: Any] = [
            "services": try #require(block["services"]),
            "loaders": ["swift-blog": ["kind": "feed", "url": "https://www.swift.org/atom.xml", "every": "30m"]],
            "subscribers": ["posts": ["kind": "post", "rules": try #require(block["rules"])]],
        ]
        let environment = ["SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/x", "DISCORD_WEBHOOK_URL": "https://discord.com/api/webhooks/1/t"]
        return try ConfigLoader(environment: environment)
            .parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
    }

    static let title = "Swift 6.3 \"released\" <b>&</b>\n"
    static let link = "https://www.swift.org/blog/swift-6.3/"
    static let summary = "Notes with \"quotes\", a \\ and\na line break."

    /// The documented rule `rule` rendered for one new feed item, parsed as JSON.
    static func rendered(_ marker: String, rule: String) throws -> [String: Any] {
        let configuration = try configuration(try documentedBlock(holding: marker))
        guard case .post(let posting)? = configuration.subscribers["posts"],
            let target = posting.rules.first(where: { $0.name == rule })?.target else {
            throw DocumentedBodyError(description: "no rule \(rule) in the documented block")
        }
        let item = FeedItem(id: "tag:swift.org,2026:6.3", title: title, link: link, author: "The Swift Team", categories: ["release"],
                            summary: summary)
        let event = FeedItemsLoaded(loader: "swift-blog", url: "https://www.swift.org/atom.xml", format: "atom", title: "Swift.org",
                                    itemCount: 1, newItems: [item])
        let json = try PostScheduler.json(of: event)
        let newItem = try #require(PostScheduler.newItems(of: json)?.first)
        guard case .webhook(let body) = try PostScheduler.render(target, PostContext(event: json, item: newItem, topic: "loader.swift-blog.finished")) else {
            throw DocumentedBodyError(description: "rule \(rule) does not render a webhook body")
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
    }

    struct DocumentedBodyError: Error, CustomStringConvertible {
        let description: String
    }

    @Test func theDocumentedSlackBodyRendersAsSlacksJSON() throws {
        let body = try Self.rendered("\"to-slack\"", rule: "to-slack")
        #expect(body.keys.sorted() == ["text", "unfurl_links"])
        #expect(body["text"] as? String == "New: <\(Self.link)|\(Self.title)>")
        #expect(body["unfurl_links"] as? Bool == false)
    }

    @Test func theDocumentedDiscordBodyRendersAsDiscordsJSON() throws {
        let body = try Self.rendered("\"to-discord\"", rule: "to-discord")
        #expect(body.keys.sorted() == ["content", "embeds", "username"])
        #expect(body["username"] as? String == "Herald")
        let content = try #require(body["content"] as? String)
        #expect(content == "New: \(Self.title)" && content.count <= 2000)
        let embeds = try #require(body["embeds"] as? [[String: Any]])
        #expect(embeds.count == 1)
        #expect(embeds.first?["title"] as? String == Self.title)
        #expect(embeds.first?["url"] as? String == Self.link)
        #expect(embeds.first?["description"] as? String == Self.summary)
    }
}
