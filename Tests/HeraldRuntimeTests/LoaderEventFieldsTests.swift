import Foundation
import Herald
@testable import HeraldRuntime
import HeraldLoaders
import HeraldServices
import HeraldSubscribers
import Testing

/// The post rules' known loader fields (``ConfigLoader/loaderEventFields``, which config
/// validation checks placeholders against) are the fields each loader kind's `finished` event
/// really has: every event type is encoded as a post rule sees it, with every optional set, and
/// its field names (and its new items') compared. A field added to or renamed in an event fails
/// here until the table follows.
@Suite struct LoaderEventFieldsTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    /// A `finished` event of each loader kind (by ``HeraldConfiguration/LoaderKind/name``), every
    /// optional field set, with one new item.
    static let samples: [String: any Event] = {
        let status = Status(id: "1", createdAt: date, text: "hello", user: TwitterUser(id: "2", name: "Sakura", screenName: "sakura"),
                            inReplyToStatusID: "0")
        let image = TiqavImage(id: "a", ext: "png", width: 1, height: 2, sourceURL: "https://example.com/a")
        let todo = BaaSObject(id: "t1", createdAt: date, updatedAt: date, etag: "e", fields: ["description": .string("milk")])
        let toot = MastodonStatus(id: "9", createdAt: date, account: MastodonAccount(id: "3", username: "u", acct: "u@example.com"),
                                  url: "https://example.com/9", content: "<p>hi</p>", language: "en",
                                  mediaAttachments: [MastodonMediaAttachment(id: "m", type: "image", url: "https://example.com/m.png")],
                                  inReplyToID: "8")
        let item = FeedItem(id: "i", title: "T", link: "https://example.com/i", published: date, author: "A", categories: ["c"],
                            enclosures: [FeedEnclosure(url: "https://example.com/e.mp3")], summary: "S")
        return [
            "timeline": TimelineLoaded(loader: "home", statuses: [status], newStatuses: [status], rateLimitRemaining: 10),
            "tiqav": TiqavLoaded(loader: "images", images: [image], newImages: [image], imageURLs: ["https://example.com/a.png"]),
            "todo": TodosLoaded(loader: "todos", bucket: "todos", todos: [todo], newTodos: [todo], removedIDs: ["t0"]),
            "mastodon": MastodonStatusesLoaded(loader: "toots", timeline: "home", statuses: [toot], newStatuses: [toot], rateLimitRemaining: 10),
            "feed": FeedItemsLoaded(loader: "news", url: "https://example.com/feed", format: "rss", title: "News", itemCount: 1, newItems: [item],
                                    notModified: false, movedTo: "https://example.com/moved", duplicateItems: 0, itemsWithoutID: 0),
        ]
    }()

    @Test func everyLoaderKindHasASample() {
        #expect(Set(Self.samples.keys) == Set(ConfigLoader.loaderEventFields.keys))
    }

    @Test(arguments: ConfigLoader.loaderEventFields.keys.sorted())
    func knownFieldsAreTheEventsFields(kind: String) throws {
        let known = try #require(ConfigLoader.loaderEventFields[kind])
        let event = try #require(Self.samples[kind])
        let json = try PostScheduler.json(of: event)
        guard case .object(let fields) = json else {
            Issue.record("\(kind): the event is not a JSON object")
            return
        }
        #expect(Set(fields.keys) == known.event, "\(kind)'s finished event")
        let items = try #require(PostScheduler.newItems(of: json), "\(kind)'s event has no new items")
        let first = try #require(items.first)
        if let knownItem = known.item {
            guard case .object(let itemFields) = first else {
                Issue.record("\(kind): a new item is not a JSON object")
                return
            }
            #expect(Set(itemFields.keys) == knownItem, "\(kind)'s new items")
        }
    }
}
