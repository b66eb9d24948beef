import Foundation

/// What is checked and settled before a feed reaches the XML parser: its character set
/// (a byte order mark, the XML declaration's `encoding`, else the `Content-Type` charset, else
/// UTF-8) with the body transcoded to UTF-8, and a prologue without entity declarations.
///
/// A `DOCTYPE` that declares entities is refused outright, before any parsing: nested entities
/// expand exponentially ("billion laughs"), and no feed needs them. An HTML page (a `DOCTYPE
/// html` or an `<html>` root) is named as such, since a feed URL that answers with a web page
/// is a common mistake.
enum FeedPrologue {
    /// The body as UTF-8, its XML declaration (if any) saying so.
    /// - Throws: ``ServiceError`` `.decoding` naming what is wrong.
    static func prepare(_ data: Data, contentType: String?) throws(ServiceError) -> Data {
        guard !data.isEmpty else { throw .decoding("the body is empty where a feed was expected", location: "body", body: data) }
        var bytes = [UInt8](data)
        var encoding: String
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            bytes.removeFirst(3)
            encoding = "utf-8"
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            encoding = "utf-16le"
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            encoding = "utf-16be"
        } else {
            encoding = declaredEncoding(bytes) ?? charset(of: contentType) ?? "utf-8"
        }
        let name = encoding.lowercased()
        if !["utf-8", "utf8", "us-ascii", "ascii"].contains(name) {
            guard let foreign = stringEncoding(name) else {
                throw .decoding("the feed's character set \"\(encoding.prefix(40))\" is not one Herald reads "
                                + "(UTF-8, UTF-16, ISO-8859-1/2/15, windows-1250/1251/1252, Shift_JIS, EUC-JP, ISO-2022-JP)",
                                location: "encoding", body: data)
            }
            guard let text = String(data: Data(bytes), encoding: foreign) else {
                throw .decoding("the body is not valid \(encoding.prefix(40)), the character set the feed names", location: "body", body: data)
            }
            bytes = Array(relabelled(text).utf8)
        }
        if let offset = TimelineXMLParser.firstInvalidUTF8Offset(Data(bytes)) {
            throw .decoding("the body is not valid UTF-8 (the feed names no other character set)", location: "byte \(offset)", body: data)
        }
        try checkPrologue(bytes, data: data)
        return Data(bytes)
    }

    /// The `encoding` of an XML declaration at the very start, if any.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let head = String(decoding: bytes.prefix(300), as: UTF8.self)
        guard let end = head.range(of: "?>") else { return nil }
        return attribute("encoding", in: head[..<end.lowerBound])
    }

    /// The `charset` parameter of a `Content-Type` value, unquoted.
    static func charset(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            let value = parts[1].trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"'")))
            return value.isEmpty ? nil : value
        }
        return nil
    }

    private static func attribute(_ name: String, in text: Substring) -> String? {
        guard let key = text.range(of: name) else { return nil }
        var rest = text[key.upperBound...].drop { $0 == " " }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let value = rest.dropFirst().prefix { $0 != quote }
        return value.isEmpty ? nil : String(value)
    }

    private static func stringEncoding(_ name: String) -> String.Encoding? {
        switch name {
        case "utf-16", "utf16": .utf16
        case "utf-16le": .utf16LittleEndian
        case "utf-16be": .utf16BigEndian
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1": .isoLatin1
        case "iso-8859-2", "latin2": .isoLatin2
        case "iso-8859-15": .isoLatin1  // differs from Latin-1 in eight rarely used places (€ among them)
        case "windows-1252", "cp1252": .windowsCP1252
        case "windows-1251", "cp1251": .windowsCP1251
        case "windows-1250", "cp1250": .windowsCP1250
        case "shift_jis", "shift-jis", "sjis", "windows-31j", "cp932": .shiftJIS
        case "euc-jp": .japaneseEUC
        case "iso-2022-jp": .iso2022JP
        default: nil
        }
    }

    /// `text` with its XML declaration's encoding now saying UTF-8 (it is re-encoded so).
    private static func relabelled(_ text: String) -> String {
        var text = text
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>") else { return text }
        let declaration = text[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return text }
        let rest = declaration[key.upperBound...]
        guard let open = rest.firstIndex(where: { $0 == "\"" || $0 == "'" }) else { return text }
        let quote = rest[open]
        guard let close = rest[rest.index(after: open)...].firstIndex(of: quote) else { return text }
        return String(text[..<rest.index(after: open)]) + "UTF-8" + String(text[close...])
    }

    /// Refuses entity declarations and names HTML, looking at what precedes the root element.
    private static func checkPrologue(_ bytes: [UInt8], data: Data) throws(ServiceError) {
        // The prologue is short in any feed; 64 KiB is plenty to find the root element.
        let text = String(decoding: bytes.prefix(64 * 1024), as: UTF8.self)
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.hasPrefix("<?") {
                guard let end = rest.range(of: "?>") else { return }
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("<!--") {
                guard let end = rest.range(of: "-->") else { return }
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("<!DOCTYPE") || rest.hasPrefix("<!doctype") {
                let doctype = doctypeExtent(rest)
                guard doctype.hasSuffix(">") else {
                    throw .decoding("the document's DOCTYPE does not end within its first 64 KiB; refused", location: "DOCTYPE", body: data)
                }
                if doctype.range(of: "<!ENTITY", options: .caseInsensitive) != nil {
                    throw .decoding("the document declares entities in its DOCTYPE; refused, since entity expansion can grow "
                                    + "without bound (\"billion laughs\") and no feed needs it", location: "DOCTYPE", body: data)
                }
                let name = doctype.dropFirst("<!DOCTYPE".count).drop { $0.isWhitespace }.prefix { !$0.isWhitespace && $0 != ">" && $0 != "[" }
                if name.lowercased() == "html" { throw htmlError(data) }
                rest = rest[doctype.endIndex...]
            } else {
                break
            }
        }
        if rest.hasPrefix("<") {
            let name = rest.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }
            if name.lowercased() == "html" { throw htmlError(data) }
        } else if !rest.isEmpty {
            throw .decoding("the body is not XML: it starts with \"\(rest.prefix(20))\" where a feed's root element should be",
                            location: "body", body: data)
        }
    }

    static func htmlError(_ data: Data) -> ServiceError {
        .decoding("the document is an HTML page, not a feed (RSS or Atom); the URL may point at the site rather than its feed",
                  location: "root element", body: data)
    }

    /// The `<!DOCTYPE …>` at the start of `text`, its internal subset (`[…]`) included.
    private static func doctypeExtent(_ text: Substring) -> Substring {
        var depth = 0
        var quote: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "[" {
                depth += 1
            } else if character == "]" {
                depth -= 1
            } else if character == ">" && depth <= 0 {
                return text[...index]
            }
            index = text.index(after: index)
        }
        return text
    }
}
