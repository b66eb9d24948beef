import Foundation

/// Renders a record as one line in a ``LogFormat``.
struct LogLineFormatter: Sendable {
    var format: LogFormat

    func line(time: Date, topic: String, sender: String?, record: LogRecord) -> String {
        let stamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(time)
        switch format {
        case .text:
            let level = record.level.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)
            return "\(stamp) \(level) \(topic)  \(record.message)"
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
            return (try? encoder.encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    /// Bare when safe, otherwise quoted with `"` and `\` escaped.
    static func logfmtValue(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" }
        if plain { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}
