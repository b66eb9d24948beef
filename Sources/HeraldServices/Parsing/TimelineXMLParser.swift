import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses a timeline in the XML format (`<statuses><status>…`) with the SAX-style
/// `XMLParser`: the parser tracks the element path, text is trimmed of white
/// space, entities are decoded, and unknown elements are skipped.
public enum TimelineXMLParser {
    /// Parses `data` into statuses in document order.
    ///
    /// - Throws: ``ServiceError`` `.decoding` on malformed or truncated XML (with the line and
    ///   column), a root other than `statuses`, or a status without id, text, date or user id.
    public static func parse(_ data: Data) throws -> [Status] {
        guard !data.isEmpty else {
            throw ServiceError.decoding("empty body where XML was expected", location: "body", body: data)
        }
        // FoundationXML traps on element names that are not valid UTF-8, so such input must
        // never reach it. Twitter's XML is UTF-8.
        if let offset = firstInvalidUTF8Offset(data) {
            throw ServiceError.decoding("body is not valid UTF-8", location: "byte \(offset)", body: data)
        }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let collector = TimelineXMLCollector()
        parser.delegate = collector
        let succeeded = parser.parse()
        if let failure = collector.failure {
            throw ServiceError.decoding(failure.reason, location: failure.location, body: data)
        }
        guard succeeded else {
            let reason = parser.parserError.map { "malformed XML: \(($0 as NSError).code)" } ?? "malformed XML"
            throw ServiceError.decoding(
                reason, location: "line \(parser.lineNumber), column \(parser.columnNumber)", body: data)
        }
        guard collector.sawRoot else {
            throw ServiceError.decoding("no <statuses> root element", location: "(root)", body: data)
        }
        // FoundationXML on Linux may report success for a document cut off mid-way.
        guard collector.closedRoot else {
            throw ServiceError.decoding(
                "truncated XML: <statuses> never closed", location: "line \(parser.lineNumber), column \(parser.columnNumber)",
                body: data)
        }
        return collector.statuses
    }

    /// The byte offset of the first invalid UTF-8 sequence, or nil when `data` is valid.
    static func firstInvalidUTF8Offset(_ data: Data) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = data.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// Parses a response body, checking that its content type, when present, names XML.
    public static func parse(_ response: HTTPResponse) throws -> [Status] {
        if let contentType = response.headers["Content-Type"]?.lowercased(), !contentType.contains("xml") {
            throw ServiceError.decoding("expected XML, got content type \(contentType)", location: "Content-Type", body: response.body)
        }
        return try parse(response.body)
    }
}
