import Foundation

/// Renders a record as one line in a ``LogFormat``.
///
/// ``oneLine(_:)`` is the one escaper of text from outside for a terminal: the console log
/// uses it, and so does every line `herald` prints (through HeraldRuntime).
package struct LogLineFormatter: Sendable {
    var format: LogFormat

    func line(time: Date, topic: String, sender: String?, record: LogRecord) -> String {
        let stamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(time)
        switch format {
        case .text:
            let level = record.level.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)
            return "\(stamp) \(level) \(topic)  \(Self.oneLine(record.message))"
        case .logfmt:
            var pairs = [("time", stamp), ("level", record.level.rawValue), ("topic", topic)]
            if let sender { pairs.append(("sender", sender)) }
            pairs.append(("msg", record.message))
            pairs += record.fields.map { ($0.key, $0.value) }
            return pairs.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            var object: [String: String] = ["time": stamp, "level": record.level.rawValue, "topic": topic, "msg": record.message]
            if let sender { object["sender"] = sender }
            for field in record.fields where object[field.key] == nil { object[field.key] = field.value }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // JSONEncoder leaves DEL, C1 and U+2028/2029 as they are.
            return (try? encoder.encode(object)).map { Self.oneLineJSON(String(decoding: $0, as: UTF8.self)) } ?? "{}"
        }
    }

    /// Bare when safe, otherwise quoted with `"` and `\` escaped and control characters
    /// written as escapes.
    static func logfmtValue(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy {
            $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" && !isControl($0)
        }
        if plain { return value }
        let escaped = oneLine(value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))
        return "\"\(escaped)\""
    }

    /// The text with every control character (line breaks, escape sequences, …) written as an
    /// escape, so text from a service can never start a forged line or drive the terminal.
    package static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isControl(scalar):
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// JSON text (a document, or a JSON Lines line) with every control character written so a
    /// terminal shows it and a JSON reader reads the same value: inside a string as a `\uXXXX`
    /// escape, outside one (where valid JSON has only insignificant white space) as a space.
    /// Text that is not JSON is escaped the same way and stays what it was, not JSON.
    package static func oneLineJSON(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        var inString = false, escaping = false
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                if inString {
                    let hex = String(scalar.value, radix: 16)
                    result.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
                } else {
                    result.append(" ")
                }
                escaping = false
                continue
            }
            result.append(scalar)
            if escaping {
                escaping = false
            } else if scalar == "\\" && inString {
                escaping = true
            } else if scalar == "\"" {
                inString.toggle()
            }
        }
        return String(result)
    }

    /// C0, DEL, C1 and the Unicode line and paragraph separators: what can move the cursor,
    /// start a line or begin an escape sequence.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
