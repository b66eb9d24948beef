import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses an RSS 2.0, RSS 1.0 (RDF) or Atom 1.0 document with the SAX-style `XMLParser`:
/// one pass over the stream, no tree kept.
///
/// Before parsing, the character set is settled and the body transcoded to UTF-8, and a
/// `DOCTYPE` declaring entities is refused (see ``FeedPrologue``); external entities are never
/// resolved. Each item gets an id (see ``FeedItem/id``); an item repeating an earlier id of the
/// document, or with nothing to identify it, is left out and counted.
public enum FeedParser {
    /// Parses `data`; `contentType` supplies the charset when the XML declaration names none.
    ///
    /// - Throws: ``ServiceError`` `.decoding` with what is wrong and where: an empty body, an
    ///   HTML page, a root that is not `rss`, `rdf:RDF` or `feed`, entity declarations, an
    ///   unknown or wrong character set, malformed or truncated XML (with line and column).
    public static func parse(_ data: Data, contentType: String? = nil) throws(ServiceError) -> FeedDocument {
        let prepared = try FeedPrologue.prepare(data, contentType: contentType)
        let parser = XMLParser(data: prepared)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        let collector = FeedCollector()
        parser.delegate = collector
        let succeeded = parser.parse()
        if let failure = collector.failure {
            throw .decoding(failure.reason, location: failure.location, body: data)
        }
        guard succeeded else {
            if looksLikeHTML(prepared) { throw FeedPrologue.htmlError(data) }
            let code = parser.parserError.map { ($0 as NSError).code }
            // libxml2's XML_ERR_UNDECLARED_ENTITY: HTML's named entities are not XML's.
            let reason = code == 26 ? "malformed XML: an entity XML does not define (such as &nbsp;; XML has only &amp; &lt; &gt; &quot; &apos; and numeric ones)"
                : "malformed XML" + (code.map { " (XML error \($0))" } ?? "")
            throw .decoding(reason, location: "line \(parser.lineNumber), column \(parser.columnNumber)", body: data)
        }
        guard let format = collector.format else {
            throw .decoding("no root element: the body holds no XML element", location: "body", body: data)
        }
        // FoundationXML on Linux may report success for a document cut off mid-way.
        guard collector.closedRoot else {
            throw .decoding("truncated XML: the root element is never closed",
                            location: "line \(parser.lineNumber), column \(parser.columnNumber)", body: data)
        }
        return FeedDocument(format: format, title: collector.feedTitle, link: collector.feedLink, items: collector.items,
                            duplicateItems: collector.duplicateItems, itemsWithoutID: collector.itemsWithoutID)
    }

    /// Whether the start of the body is an HTML page's (malformed as XML, as HTML pages are).
    private static func looksLikeHTML(_ data: Data) -> Bool {
        let start = String(decoding: data.prefix(1024), as: UTF8.self).lowercased()
        return start.contains("<html") || start.contains("<!doctype html") || start.contains("<head>") || start.contains("<body")
    }
}
