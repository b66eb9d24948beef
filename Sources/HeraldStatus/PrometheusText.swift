import Foundation

/// Writes the Prometheus text exposition format, version 0.0.4: each family once, its
/// `# HELP` and `# TYPE` lines, then its samples, label values and help text escaped as the
/// format says (`\\`, `\"` and `\n` in label values; `\\` and `\n` in help).
///
/// Not thread-safe: one per scrape.
struct PrometheusText {
    /// The content type of the format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    enum Kind: String {
        case counter
        case gauge
    }

    private(set) var text = ""

    /// Starts a family; its samples follow.
    mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of the family just started.
    mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.key)=\"\(Self.escapeLabel($0.value))\"" }.joined(separator: ",") + "}"
        }
        text += " \(Self.format(value))\n"
    }

    /// A family with one sample per element of `items` (none at all is allowed).
    mutating func family<Item>(_ name: String, _ kind: Kind, _ help: String, _ items: [Item],
                               _ sampleOf: (Item) -> (KeyValuePairs<String, String>, Double)) {
        family(name, kind, help)
        for item in items {
            let (labels, value) = sampleOf(item)
            sample(name, labels, value)
        }
    }

    static func escapeLabel(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Integers without a fraction, others as Go's ParseFloat reads them; NaN and infinities
    /// as the format spells them.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
