import Foundation

/// One item of a feed (an RSS `<item>`, an Atom `<entry>`), as plain values.
///
/// `summary` is plain text: entities and CDATA decoded, HTML tags dropped, white space
/// collapsed, at most ``FeedItem/summaryLimit`` characters.
public struct FeedItem: Sendable, Hashable, Codable {
    /// The most characters of ``summary`` kept (longer ones end in `…`).
    public static let summaryLimit = 2_000

    /// The item's id: its guid (RSS 2.0), `rdf:about` (RSS 1.0) or `<id>` (Atom); else its
    /// link; else `sha1:` and the SHA-1 of its title and date. An id longer than 256 bytes is
    /// replaced by `sha1:` and its own SHA-1, so it fits the loader's state.
    public var id: String
    /// The title, plain text.
    public var title: String?
    /// The link (Atom: the `alternate` link, else the first).
    public var link: String?
    /// When it was published (RSS `pubDate`, Dublin Core `date`, Atom `published`, else `updated`).
    public var published: Date?
    /// The author's name (RSS `author` or `dc:creator`, Atom `author/name`).
    public var author: String?
    /// Its categories (RSS `category`, Dublin Core `subject`, Atom `category/@term`).
    public var categories: [String]
    /// Attached media (RSS `enclosure`, Atom `link rel="enclosure"`).
    public var enclosures: [FeedEnclosure]
    /// The summary or content, as plain text.
    public var summary: String?

    /// Creates an item.
    public init(id: String, title: String? = nil, link: String? = nil, published: Date? = nil, author: String? = nil,
                categories: [String] = [], enclosures: [FeedEnclosure] = [], summary: String? = nil) {
        self.id = id
        self.title = title
        self.link = link
        self.published = published
        self.author = author
        self.categories = categories
        self.enclosures = enclosures
        self.summary = summary
    }
}

/// A media file attached to a feed item.
public struct FeedEnclosure: Sendable, Hashable, Codable {
    /// Where it is.
    public var url: String
    /// Its media type, when given (`audio/mpeg`).
    public var type: String?
    /// Its length in bytes, when given.
    public var length: Int?

    /// Creates an enclosure.
    public init(url: String, type: String? = nil, length: Int? = nil) {
        self.url = url
        self.type = type
        self.length = length
    }
}

/// A parsed feed: its format, title, link and items in document order (each id once).
public struct FeedDocument: Sendable, Hashable {
    /// Which of the three formats.
    public enum Format: String, Sendable, Hashable, Codable {
        /// RSS 2.0 (and 0.9x): `<rss><channel><item>`.
        case rss2 = "rss"
        /// RSS 1.0: `<rdf:RDF><item rdf:about>`.
        case rss1 = "rdf"
        /// Atom 1.0: `<feed><entry>`.
        case atom
    }

    /// The format.
    public var format: Format
    /// The feed's title, plain text.
    public var title: String?
    /// The feed's own link (its web site).
    public var link: String?
    /// The items, in document order, duplicates of an earlier id left out.
    public var items: [FeedItem]
    /// How many items repeated an id already seen in the document (left out).
    public var duplicateItems: Int
    /// How many items had nothing to identify them (no id, link, title or date), left out.
    public var itemsWithoutID: Int

    /// Creates a document.
    public init(format: Format, title: String? = nil, link: String? = nil, items: [FeedItem], duplicateItems: Int = 0,
                itemsWithoutID: Int = 0) {
        self.format = format
        self.title = title
        self.link = link
        self.items = items
        self.duplicateItems = duplicateItems
        self.itemsWithoutID = itemsWithoutID
    }
}
