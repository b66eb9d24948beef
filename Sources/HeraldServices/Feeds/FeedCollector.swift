import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParserDelegate` behind ``FeedParser``: collects the items of an RSS 2.0, RSS 1.0
/// or Atom 1.0 document from SAX events.
///
/// Element and attribute names are compared without their namespace prefix (`dc:creator` is
/// `creator`, `atom:link` is `link`), so a feed that binds the usual namespaces to unusual
/// prefixes reads the same. Lives only for one synchronous `parse()` call on one thread, so it
/// needs no isolation.
final class FeedCollector: NSObject, XMLParserDelegate {
    struct Failure {
        var reason: String
        var location: String
    }

    /// The most items read from one document; later ones are left out.
    static let maxItems = 2_500

    private(set) var format: FeedDocument.Format?
    private(set) var failure: Failure?
    private(set) var closedRoot = false
    private(set) var feedTitle: String?
    private(set) var feedLink: String?
    private(set) var items: [FeedItem] = []
    private(set) var duplicateItems = 0
    private(set) var itemsWithoutID = 0
    private var ids = Set<String>()

    private var path: [String] = []
    /// The depth at which items sit (`rss/channel/item` = 3, `RDF/item` and `feed/entry` = 2), once known.
    private var itemDepth = 0
    private var item: ItemFields?
    /// Text of the element a field is read from, its descendants' text included.
    private var fieldText = ""
    /// Text of the innermost element only.
    private var leafText = ""
    private var fieldAttributes: [String: String] = [:]

    private struct ItemFields {
        var fields: [String: String] = [:]
        var types: [String: String] = [:]
        var about: String?
        var categories: [String] = []
        var enclosures: [FeedEnclosure] = []
        var links: [(rel: String, href: String)] = []
        var authorName: String?
    }

    static func local(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        let name = Self.local(elementName)
        var attributes = Dictionary(attributes.map { (Self.local($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        if path.isEmpty {
            switch name {
            case "rss": format = .rss2; itemDepth = 3
            case "RDF": format = .rss1; itemDepth = 2
            case "feed": format = .atom; itemDepth = 2
            case let other where other.lowercased() == "html":
                fail(parser, "the document is an HTML page, not a feed (RSS or Atom)", location: "root element")
                return
            default:
                fail(parser, "the root element is <\(elementName.prefix(40))>; a feed's is <rss>, <rdf:RDF> or <feed>", location: "root element")
                return
            }
        }
        path.append(name)
        leafText = ""
        let depth = path.count
        let isItem = depth == itemDepth && (name == "item" || name == "entry")
            && (format != .rss2 || path[1] == "channel")
        if isItem {
            item = ItemFields(about: attributes["about"])
            return
        }
        if item != nil {
            if depth == itemDepth + 1 {
                fieldText = ""
                fieldAttributes = attributes
                handleEmptyFields(name, &attributes)
            } else {
                fieldText += " "
            }
        } else if depth == itemDepth, name == "link", format == .atom,
                  attributes["rel"].map({ $0 == "alternate" }) ?? true, feedLink == nil {
            feedLink = attributes["href"]
        }
    }

    /// Fields whose value is in attributes: enclosures, Atom links and categories.
    private func handleEmptyFields(_ name: String, _ attributes: inout [String: String]) {
        switch name {
        case "enclosure":
            if let url = attributes["url"], !url.isEmpty {
                item?.enclosures.append(FeedEnclosure(url: url, type: attributes["type"], length: attributes["length"].flatMap { Int($0) }))
            }
        case "link" where format == .atom:
            guard let href = attributes["href"], !href.isEmpty else { return }
            let rel = attributes["rel"] ?? "alternate"
            item?.links.append((rel, href))
            if rel == "enclosure" {
                item?.enclosures.append(FeedEnclosure(url: href, type: attributes["type"], length: attributes["length"].flatMap { Int($0) }))
            }
        case "category" where format == .atom:
            if let term = attributes["label"] ?? attributes["term"], !term.isEmpty { item?.categories.append(term) }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        leafText += string
        if item != nil { fieldText += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.parser(parser, foundCharacters: String(decoding: CDATABlock, as: UTF8.self))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let name = Self.local(elementName)
        let depth = path.count
        if item != nil {
            if depth == itemDepth {
                finishItem(parser)
            } else if depth == itemDepth + 1 {
                record(name)
            } else {
                if depth == itemDepth + 2, path[itemDepth] == "author", name == "name" {
                    item?.authorName = leafText.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                fieldText += " "
            }
        } else {
            let inChannel = format == .atom ? depth == 2 : depth == 3 && path[1] == "channel"
            if inChannel {
                if name == "title", feedTitle == nil { feedTitle = FeedText.plain(leafText, html: format != .atom) }
                if name == "link", format != .atom, feedLink == nil { feedLink = FeedText.collapse(leafText) }
            }
        }
        leafText = ""
        if !path.isEmpty { path.removeLast() }
        if path.isEmpty && format != nil { closedRoot = true }
    }

    private func record(_ name: String) {
        let text = fieldText
        switch name {
        case "category", "subject":
            if format != .atom {
                let category = FeedText.collapse(text)
                if !category.isEmpty { item?.categories.append(category) }
            }
        case "enclosure":
            break
        case "link" where format == .atom:
            break
        default:
            if item?.fields[name] == nil {
                item?.fields[name] = text
                if let type = fieldAttributes["type"] { item?.types[name] = type }
            }
        }
    }

    private func finishItem(_ parser: XMLParser) {
        guard let current = item else { return }
        item = nil
        guard items.count < Self.maxItems else { return }
        let fields = current.fields
        let isAtom = format == .atom
        let title = fields["title"].map { FeedText.plain($0, html: !isAtom || Self.isHTML(current.types["title"])) }.flatMap(Self.nonEmpty)
        let link: String?
        if isAtom {
            link = (current.links.first { $0.rel == "alternate" } ?? current.links.first)?.href
        } else {
            link = fields["link"].map(FeedText.collapse).flatMap(Self.nonEmpty)
        }
        let dateText = (isAtom ? fields["published"] ?? fields["updated"] : fields["pubDate"] ?? fields["date"])
            .map(FeedText.collapse)
        let published = dateText.flatMap(FeedDates.parse)
        let author = (current.authorName ?? fields["creator"] ?? (isAtom ? nil : fields["author"]))
            .map(FeedText.collapse).flatMap(Self.nonEmpty)
        let summary: String?
        if isAtom {
            let key = fields["summary"] != nil ? "summary" : "content"
            summary = fields[key].map { FeedText.plain($0, html: Self.isHTML(current.types[key])) }.flatMap(Self.nonEmpty)
        } else {
            summary = (fields["description"] ?? fields["encoded"]).map { FeedText.plain($0, html: true) }.flatMap(Self.nonEmpty)
        }
        let declared = (isAtom ? fields["id"] : fields["guid"]).map(FeedText.collapse).flatMap(Self.nonEmpty) ?? current.about.flatMap(Self.nonEmpty)
        var id = declared ?? link
        if id == nil {
            let basis = [title ?? "", dateText ?? "", summary ?? ""]
            if basis.contains(where: { !$0.isEmpty }) {
                id = "sha1:" + Self.hex(SHA1.hash(Array(basis.joined(separator: "\n").utf8)))
            }
        }
        guard var id else {
            itemsWithoutID += 1
            return
        }
        if id.utf8.count > 256 { id = "sha1:" + Self.hex(SHA1.hash(Array(id.utf8))) }
        guard ids.insert(id).inserted else {
            duplicateItems += 1
            return
        }
        items.append(FeedItem(id: id, title: title, link: link, published: published, author: author,
                              categories: current.categories, enclosures: current.enclosures, summary: summary))
    }

    private static func isHTML(_ type: String?) -> Bool {
        guard let type = type?.lowercased() else { return false }
        return type == "html" || type == "xhtml" || type.hasSuffix("html")
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    func fail(_ parser: XMLParser, _ reason: String, location: String? = nil) {
        guard failure == nil else { return }
        failure = Failure(reason: reason, location: location ?? "line \(parser.lineNumber), column \(parser.columnNumber)")
        parser.abortParsing()
    }
}
