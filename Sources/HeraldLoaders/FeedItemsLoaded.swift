import Herald
import HeraldServices

/// `loader.<id>.finished` from a ``FeedLoader``: the items of the feed not announced before.
///
/// `newItems` holds the new items in full (id, title, link, published, author, categories,
/// enclosures, summary as plain text), in document order; the others are only counted, so a
/// feed polled every few minutes does not fill the archive with the same items again. A load
/// the server answered with 304 Not Modified is a finished load with `notModified` set and no
/// items. Post rules with `"for": "new"` post once per element of `newItems`.
public struct FeedItemsLoaded: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// The feed's URL as configured.
    public var url: String
    /// The feed's format: `rss`, `rdf` or `atom` (nil when not modified).
    public var format: String?
    /// The feed's title, when it has one.
    public var title: String?
    /// How many items the document held (each id once); 0 when not modified.
    public var itemCount: Int
    /// The items not seen before (all of them on a first load), in document order.
    public var newItems: [FeedItem]
    /// Whether the server answered 304 Not Modified.
    public var notModified: Bool
    /// Where the feed moved permanently (a 301 or 308), when it did: the URL to configure.
    public var movedTo: String?
    /// Items left out for repeating an id earlier in the same document.
    public var duplicateItems: Int
    /// Items left out for having nothing to identify them (no id, link, title, date or summary).
    public var itemsWithoutID: Int

    /// Creates the event.
    public init(loader: String, url: String, format: String? = nil, title: String? = nil, itemCount: Int = 0,
                newItems: [FeedItem] = [], notModified: Bool = false, movedTo: String? = nil, duplicateItems: Int = 0,
                itemsWithoutID: Int = 0) {
        self.loader = loader
        self.url = url
        self.format = format
        self.title = title
        self.itemCount = itemCount
        self.newItems = newItems
        self.notModified = notModified
        self.movedTo = movedTo
        self.duplicateItems = duplicateItems
        self.itemsWithoutID = itemsWithoutID
    }

    /// `loader.<id>.finished`.
    public var topic: Topic { LoaderTopics.topic(loader, "finished") }
}
