/// Turns a Mastodon status's `content` (sanitised HTML: `<p>`, `<br>`, `<span>`, `<a>`, and
/// whatever a remote server sent) into plain text.
///
/// Paragraphs become blank-line separated, `<br>` a line break; every other tag is dropped and
/// its text kept (a link's full URL too: Mastodon hides parts of it in `invisible` spans, which
/// plain text shows); `<script>`, `<style>` and comments vanish whole. Character references are
/// decoded (named ones of HTML's common set, decimal and hexadecimal); one that is unknown or
/// invalid stays as written. Custom emoji shortcodes (`:blobcat:`) are text already and stay.
/// Runs of white space collapse to one space, as a browser shows them. Never traps, whatever the
/// input: a `<` that opens no tag, or a tag never closed by `>`, is text.
public enum MastodonHTML {
    /// The plain text of `html`.
    public static func plainText(_ html: String) -> String {
        var output = TextBuilder()
        let scalars = Array(html.unicodeScalars)
        var index = 0
        var skipping: String?  // inside <script> or <style>: until its end tag
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "<", let tag = Tag.read(scalars, at: index) {
                index = tag.end
                if let closing = skipping {
                    if tag.isEnd, tag.name == closing { skipping = nil }
                    continue
                }
                switch tag.name {
                case "br": output.lineBreak()
                case "p", "div", "blockquote", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre":
                    output.paragraphBreak()
                case "script", "style":
                    if !tag.isEnd && !tag.selfClosing { skipping = tag.name }
                default: break
                }
                continue
            }
            if skipping != nil {
                index += 1
                continue
            }
            if scalar == "&", let (decoded, end) = reference(scalars, at: index) {
                output.append(decoded)
                index = end
                continue
            }
            output.append(scalar)
            index += 1
        }
        return output.finished
    }

    /// A character reference at `index` (`&amp;`, `&#233;`, `&#x1F600;`): the text and the index
    /// after it, or nil when there is none.
    static func reference(_ scalars: [Unicode.Scalar], at index: Int) -> (String, Int)? {
        var end = index + 1
        var name = ""
        while end < scalars.count, end - index <= 32, scalars[end] != ";" {
            let scalar = scalars[end]
            guard scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "#" else { return nil }
            name.unicodeScalars.append(scalar)
            end += 1
        }
        guard end < scalars.count, scalars[end] == ";", !name.isEmpty else { return nil }
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value: UInt32?
            if digits.first == "x" || digits.first == "X" {
                value = UInt32(digits.dropFirst(), radix: 16)
            } else {
                value = UInt32(digits, radix: 10)
            }
            // Null and surrogates are not characters; HTML shows U+FFFD for them.
            guard let value else { return nil }
            guard value != 0, let decoded = Unicode.Scalar(value) else { return ("\u{FFFD}", end + 1) }
            return (String(Character(decoded)), end + 1)
        }
        guard let decoded = named[name] else { return nil }
        return (decoded, end + 1)
    }

    /// The named references a status is likely to hold.
    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{00A0}", "hellip": "…",
        "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«",
        "raquo": "»", "copy": "©", "reg": "®", "trade": "™", "deg": "°", "middot": "·", "bull": "•",
        "euro": "€", "pound": "£", "yen": "¥", "times": "×", "divide": "÷", "shy": "\u{00AD}",
        "zwj": "\u{200D}", "zwnj": "\u{200C}",
    ]

    /// The longest tag read as one (attributes included).
    static let maxTagLength = 8192

    /// One tag: `<p>`, `</a>`, `<br/>`, `<a href="…">`, or a comment / doctype (no name).
    struct Tag {
        var name: String
        var isEnd: Bool
        var selfClosing: Bool
        var end: Int

        /// The tag starting at `start` (a `<`), or nil when the `<` opens no tag.
        static func read(_ scalars: [Unicode.Scalar], at start: Int) -> Tag? {
            var index = start + 1
            guard index < scalars.count else { return nil }
            if scalars[index] == "!" {
                // A comment ends at -->, a doctype or other declaration at >.
                let isComment = index + 2 < scalars.count && scalars[index + 1] == "-" && scalars[index + 2] == "-"
                var cursor = index + 1
                while cursor < scalars.count {
                    if isComment {
                        if scalars[cursor] == ">", cursor >= index + 4, scalars[cursor - 1] == "-", scalars[cursor - 2] == "-" {
                            return Tag(name: "", isEnd: false, selfClosing: true, end: cursor + 1)
                        }
                    } else if scalars[cursor] == ">" {
                        return Tag(name: "", isEnd: false, selfClosing: true, end: cursor + 1)
                    }
                    cursor += 1
                }
                return Tag(name: "", isEnd: false, selfClosing: true, end: scalars.count)
            }
            var isEnd = false
            if scalars[index] == "/" {
                isEnd = true
                index += 1
            }
            guard index < scalars.count, scalars[index].properties.isAlphabetic, scalars[index].isASCII else { return nil }
            var name = ""
            while index < scalars.count, scalars[index].isASCII, scalars[index].properties.isAlphabetic || ("0"..."9").contains(scalars[index]) {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            // Attributes: quoted values may hold '>'. A tag longer than `maxTagLength` is text,
            // so unclosed '<'s cannot make the conversion quadratic.
            var quote: Unicode.Scalar?
            var previous: Unicode.Scalar = " "
            let limit = min(scalars.count, start + maxTagLength)
            while index < limit {
                let scalar = scalars[index]
                if let open = quote {
                    if scalar == open { quote = nil }
                } else if scalar == "\"" || scalar == "'" {
                    quote = scalar
                } else if scalar == ">" {
                    return Tag(name: name.lowercased(), isEnd: isEnd, selfClosing: previous == "/", end: index + 1)
                }
                previous = scalar
                index += 1
            }
            // Never closed: not a tag but text (sanitised HTML escapes a bare '<'; this is bad input).
            return nil
        }
    }

    /// Collects text, collapsing white space and placing line and paragraph breaks.
    struct TextBuilder {
        private var text = ""
        private var pendingSpace = false
        private var pendingBreaks = 0

        mutating func append(_ string: String) {
            for scalar in string.unicodeScalars { append(scalar) }
        }

        mutating func append(_ scalar: Unicode.Scalar) {
            if scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" || scalar == "\u{0C}" {
                pendingSpace = true
                return
            }
            if !text.isEmpty {
                if pendingBreaks > 0 {
                    text += String(repeating: "\n", count: pendingBreaks)
                } else if pendingSpace {
                    text += " "
                }
            }
            pendingBreaks = 0
            pendingSpace = false
            text.unicodeScalars.append(scalar)
        }

        mutating func lineBreak() {
            pendingBreaks += 1
            pendingSpace = false
        }

        mutating func paragraphBreak() {
            pendingBreaks = max(pendingBreaks, 2)
            pendingSpace = false
        }

        var finished: String { text }
    }
}
