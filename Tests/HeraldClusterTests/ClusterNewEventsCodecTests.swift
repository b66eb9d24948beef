import Foundation
import Herald
import HeraldCluster
import HeraldLoaders
import HeraldServices
import HeraldSubscribers
import Testing

/// An imported event's JSON, as a post rule's templates and conditions read it: published on a
/// bus, it encodes as the JSON object the exporting node wrote.
private struct ImportedJSON: Event {
    var topic: Topic
    var json: JSONValue

    init(_ remote: RemoteEvent) {
        topic = remote.topic
        json = remote.event
    }

    init(from decoder: any Decoder) throws {
        json = try decoder.singleValueContainer().decode(JSONValue.self)
        topic = "imported.event"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(json)
    }
}

/// The events of the X API v2 timeline loader (``TimelineLoaded``) and the Mastodon loader
/// (``MastodonStatusesLoaded``) cross the cluster: a node's envelope becomes a message on
/// `herald.<topic>`, another node imports it as a ``RemoteEvent`` with every field, and a post
/// rule makes of the imported JSON exactly the posts it makes of the local event.
@Suite struct ClusterNewEventsCodecTests {
    private let bus = UUID(uuidString: "7D5C2E1A-43F0-4C8B-9E61-2B8F0A4D9C33")!
    private let now = Date(timeIntervalSince1970: 1_780_000_100)

    static let mastodon = MastodonStatusesLoaded(
        loader: "fediverse", timeline: "hashtag #herald",
        statuses: [first, second], newStatuses: [first, second], rateLimitRemaining: 299)
    static let first = MastodonStatus(
        id: "113000000000000001", createdAt: Date(timeIntervalSince1970: 1_780_000_000.25),
        account: MastodonAccount(id: "7", username: "ada", acct: "ada@example.social", displayName: "Ada ✨", url: "https://example.social/@ada"),
        url: "https://example.social/@ada/113000000000000001",
        content: #"<p>Hello &amp; welcome, <a href="https://example.social/tags/herald" class="mention hashtag">#<span>herald</span></a> :blobcat:</p>"#,
        language: "en",
        mediaAttachments: [MastodonMediaAttachment(id: "m1", type: "image", url: "https://example.social/m1.png", description: "a \"cat\"")])
    static let second = MastodonStatus(
        id: "113000000000000002", createdAt: Date(timeIntervalSince1970: 1_780_000_050.5),
        account: MastodonAccount(id: "8", username: "bob", acct: "bob", displayName: "Bob"),
        content: "<p>a reply from the local server</p>", visibility: "unlisted", spoilerText: "cw: tests",
        inReplyToID: "113000000000000001")

    static let x = TimelineLoaded(
        loader: "xhome",
        statuses: [xFirst, xSecond], newStatuses: [xFirst, xSecond], rateLimitRemaining: 179)
    static let xFirst = Status(id: "1850000000000000001", createdAt: Date(timeIntervalSince1970: 1_780_000_000),
                               text: "Hello from X API v2 ☕ \"quoted\"", user: TwitterUser(id: "2244994945", name: "X Dev", screenName: "xdevelopers"))
    static let xSecond = Status(id: "1850000000000000002", createdAt: Date(timeIntervalSince1970: 1_780_000_060),
                                text: "not this one", user: TwitterUser(id: "12", name: "Twelve", screenName: "twelve"),
                                inReplyToStatusID: "1850000000000000001")

    private func envelope(_ event: any Event, sender: Sender) -> Envelope<any Event> {
        Envelope(topic: event.topic, sender: sender, id: EventID(bus: bus, sequence: 42), correlationID: EventID(bus: bus, sequence: 42),
                 timestamp: now, event: event)
    }

    /// Node a exports the envelope; node b decodes the message.
    private func imported(_ local: Envelope<any Event>) throws -> (remote: RemoteEvent, envelope: Envelope<any Event>) {
        let message = try ClusterEventCodec(node: "a").message(for: local)
        guard case .event(let remote, let sender, let correlation) = ClusterEventCodec(node: "b").decode(message) else {
            throw CodecFailure(message: "not imported: \(ClusterEventCodec(node: "b").decode(message))")
        }
        let envelope = Envelope<any Event>(topic: remote.topic, sender: sender, id: EventID(bus: UUID(), sequence: 1),
                                           correlationID: correlation ?? EventID(bus: UUID(), sequence: 1), timestamp: now,
                                           event: ImportedJSON(remote))
        return (remote, envelope)
    }

    private struct CodecFailure: Error { var message: String }

    /// The event's `newStatuses[index]`.
    static func item(_ event: JSONValue, _ index: Int) -> JSONValue? {
        guard case .array(let items)? = event["newStatuses"], items.indices.contains(index) else { return nil }
        return items[index]
    }

    /// The JSON object back into the typed event.
    private func typed<E: Event>(_ json: JSONValue, as type: E.Type) throws -> E {
        try JSONDecoder().decode(E.self, from: JSONEncoder().encode(json))
    }

    @Test func aMastodonLoadCrossesTheClusterWithEveryField() throws {
        let (remote, envelope) = try imported(envelope(Self.mastodon, sender: "loader.fediverse"))
        #expect(remote.topic == "loader.fediverse.finished" && remote.node == "a")
        #expect(envelope.sender == "loader.fediverse")
        #expect(try typed(remote.event, as: MastodonStatusesLoaded.self) == Self.mastodon)
        // What a consumer that is not Herald reads: the API's field names, the date as ISO 8601.
        let first = Self.item(remote.event, 0)
        #expect(first?["created_at"] == .string("2026-05-28T20:26:40.250Z"))
        #expect(first?["account"]?["acct"] == .string("ada@example.social"))
        #expect(first?["text"] == .string(Self.first.text) && Self.first.text.contains("#herald") && !Self.first.text.contains("<"))
        #expect(Self.item(remote.event, 1)?["in_reply_to_id"] == .string("113000000000000001"))
        #expect(remote.event["rateLimitRemaining"] == .integer(299))
    }

    @Test func anXTimelineLoadCrossesTheClusterWithEveryField() throws {
        let (remote, _) = try imported(envelope(Self.x, sender: "loader.xhome"))
        #expect(remote.topic == "loader.xhome.finished")
        #expect(try typed(remote.event, as: TimelineLoaded.self) == Self.x)
        let first = Self.item(remote.event, 0)
        #expect(first?["id_str"] == .string("1850000000000000001"))
        #expect(first?["user"]?["screen_name"] == .string("xdevelopers"))
        #expect(Self.item(remote.event, 1)?["in_reply_to_status_id_str"] == .string("1850000000000000001"))
    }

    /// The rule's intents from the local envelope and from the imported one: same keys (the
    /// item's id, qualified by the announcing loader) and same content.
    private func sameIntents(_ rule: PostRule, _ event: any Event, sender: Sender) throws -> [PostIntent] {
        let local = envelope(event, sender: sender)
        let (_, remote) = try imported(local)
        func intents(_ envelope: Envelope<any Event>) throws -> [PostIntent] {
            try PostIntake.outcomes(for: envelope, rule: rule, now: now).map { outcome in
                guard case .intent(let intent) = outcome else { throw CodecFailure(message: "\(outcome)") }
                return intent
            }
        }
        let fromLocal = try intents(local)
        let fromImported = try intents(remote)
        #expect(fromImported.map(\.key) == fromLocal.map(\.key))
        #expect(fromImported.map(\.content) == fromLocal.map(\.content))
        return fromLocal
    }

    @Test func aMastodonRuleMakesTheSamePostsOfTheImportedEventAsOfTheLocalOne() throws {
        let rule = PostRule(
            name: "cross", on: "loader.fediverse.finished", scope: .newItems,
            conditions: [PostCondition(field: try #require(FieldPath("account.acct")), .contains("example.social"))],
            service: "x",
            target: .status(text: try PostTemplate("{{account.display_name}} wrote: {{text}} ({{created_at}}, {{media_attachments.0.description}})"),
                            media: nil, inReplyTo: nil))
        let intents = try sameIntents(rule, Self.mastodon, sender: "loader.fediverse")
        #expect(intents.map(\.key) == ["cross:item:loader.fediverse:113000000000000001"])
        #expect(intents.first?.content == .status(text: "Ada ✨ wrote: \(Self.first.text) (2026-05-28T20:26:40.250Z, a \"cat\")", media: nil))

        let reply = PostRule(name: "answer", on: "loader.fediverse.finished", scope: .newItems,
                             conditions: [PostCondition(field: try #require(FieldPath("in_reply_to_id")), .exists(true))],
                             service: "masto",
                             target: .mastodonStatus(MastodonPostTemplate(text: try PostTemplate("@{{account.acct}} thanks"),
                                                                         spoiler: try PostTemplate("{{spoiler_text}}"),
                                                                         inReplyTo: try PostTemplate("{{id}}"))))
        let answers = try sameIntents(reply, Self.mastodon, sender: "loader.fediverse")
        #expect(answers.map(\.content) == [.mastodonStatus(MastodonPostContent(text: "@bob thanks", spoiler: "cw: tests",
                                                                               inReplyTo: "113000000000000002"))])
    }

    @Test func anXRuleMakesTheSamePostsOfTheImportedEventAsOfTheLocalOne() throws {
        let rule = PostRule(
            name: "toot-back", on: "loader.xhome.finished", scope: .newItems,
            conditions: [PostCondition(field: try #require(FieldPath("text")), .contains("v2"))],
            service: "x",
            target: .status(text: try PostTemplate("@{{user.screen_name}} {{text}} at {{created_at}}"), media: nil,
                            inReplyTo: try PostTemplate("{{id_str}}")))
        let intents = try sameIntents(rule, Self.x, sender: "loader.xhome")
        #expect(intents.map(\.key) == ["toot-back:item:loader.xhome:1850000000000000001"])
        #expect(intents.first?.content == .status(text: "@xdevelopers Hello from X API v2 ☕ \"quoted\" at Thu May 28 20:26:40 +0000 2026",
                                                  media: nil, inReplyTo: "1850000000000000001"))
    }
}
