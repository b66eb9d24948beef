import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParserDelegate` behind ``TimelineXMLParser``: collects statuses from SAX events.
///
/// Lives only for one synchronous `parse()` call on one thread, so it needs no isolation.
final class TimelineXMLCollector: NSObject, XMLParserDelegate {
    struct Failure {
        var reason: String
        var location: String
    }

    private(set) var statuses: [Status] = []
    private(set) var failure: Failure?
    private(set) var sawRoot = false
    private(set) var closedRoot = false

    private var path: [String] = []
    private var text = ""
    private var fields: [String: String] = [:]
    private var statusIndex = -1

    /// The element paths whose text is kept, relative to `statuses/status`.
    private static let wanted: Set<String> = [
        "id", "created_at", "text", "in_reply_to_status_id", "user/id", "user/name", "user/screen_name",
    ]

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        if path.isEmpty {
            guard elementName == "statuses" else {
                fail(parser, "root element is <\(elementName)>, expected <statuses>")
                return
            }
            sawRoot = true
        }
        path.append(elementName)
        text = ""
        if path == ["statuses", "status"] {
            statusIndex += 1
            fields = [:]
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        text += String(decoding: CDATABlock, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if path.count > 2, path[0] == "statuses", path[1] == "status" {
            let relative = path[2...].joined(separator: "/")
            if Self.wanted.contains(relative) {
                fields[relative] = text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        } else if path == ["statuses", "status"] {
            finishStatus(parser)
        }
        text = ""
        if !path.isEmpty { path.removeLast() }
        if path.isEmpty && sawRoot { closedRoot = true }
    }

    private func finishStatus(_ parser: XMLParser) {
        let location = "statuses/status[\(statusIndex)]"
        guard let id = fields["id"], !id.isEmpty, id.allSatisfy(\.isNumber) else {
            fail(parser, "status without a numeric <id>", location: location + "/id")
            return
        }
        guard let created = fields["created_at"], let date = ServiceDates.parseTwitter(created) else {
            fail(parser, "status without a Twitter <created_at>", location: location + "/created_at")
            return
        }
        guard let text = fields["text"] else {
            fail(parser, "status without <text>", location: location + "/text")
            return
        }
        guard let userID = fields["user/id"], !userID.isEmpty else {
            fail(parser, "status without <user><id>", location: location + "/user/id")
            return
        }
        let user = TwitterUser(id: userID, name: fields["user/name"] ?? "", screenName: fields["user/screen_name"] ?? "")
        let reply = fields["in_reply_to_status_id"].flatMap { $0.isEmpty ? nil : $0 }
        statuses.append(Status(id: id, createdAt: date, text: text, user: user, inReplyToStatusID: reply))
    }

    private func fail(_ parser: XMLParser, _ reason: String, location: String? = nil) {
        guard failure == nil else { return }
        failure = Failure(reason: reason, location: location ?? "line \(parser.lineNumber), column \(parser.columnNumber)")
        parser.abortParsing()
    }
}
