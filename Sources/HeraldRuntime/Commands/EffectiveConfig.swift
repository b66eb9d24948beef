import Foundation

/// `herald check --print`: the configuration as the daemon runs it, every default filled in,
/// as JSON, with every secret masked.
///
/// Made by reflection over the validated ``HeraldConfiguration``, so a section or kind added
/// later shows without a change here. Durations read as in the config (`30s`), URLs and dates as
/// text, values that describe themselves (a template, a topic pattern, a condition) by their
/// description. A field whose name says it holds a secret (`…Secret`, `…Token`, `…Key`,
/// `credentials`, `authorization`, a password) reads `"********"` whatever it holds, and so
/// does any other string holding a secret (of eight characters or more) read from the file or
/// the environment.
public enum EffectiveConfig {
    /// What masked secrets read as.
    public static let mask = "********"

    /// The configuration as pretty JSON with sorted keys.
    public static func json(_ configuration: HeraldConfiguration) -> String {
        let secrets = configuration.secrets.filter { !$0.isEmpty }
        var root = value(of: configuration, secrets: secrets, depth: 0) as? [String: Any] ?? [:]
        root["secrets"] = nil  // the list of secret values itself
        root["source"] = configuration.source.map { ["sha1": $0.sha1, "loadedAt": ISO8601DateFormatter().string(from: $0.loadedAt)] }
        let data = (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static func value(of subject: Any, secrets: [String], depth: Int) -> Any {
        guard depth < 24 else { return "…" }
        switch subject {
        case let text as String: return masked(text, secrets)
        case let flag as Bool: return flag
        case let number as Int: return number
        case let number as Int64: return number
        case let number as UInt64: return number
        case let number as Int32: return number
        case let number as UInt16: return number
        case let number as Double: return number
        case let duration as Duration: return DurationText.format(duration)
        case let date as Date: return ISO8601DateFormatter().string(from: date)
        case let url as URL: return masked(url.isFileURL ? url.path : url.absoluteString, secrets)
        case let described as CustomStringConvertible where !(subject is any Collection):
            let mirror = Mirror(reflecting: subject)
            // A type that describes itself is shown so, unless it is a plain enum case of ours.
            if mirror.displayStyle != .optional { return masked(described.description, secrets) }
        default: break
        }
        let mirror = Mirror(reflecting: subject)
        switch mirror.displayStyle {
        case .optional:
            guard let first = mirror.children.first else { return NSNull() }
            return value(of: first.value, secrets: secrets, depth: depth + 1)
        case .dictionary:
            var object: [String: Any] = [:]
            for child in mirror.children {
                let pair = Array(Mirror(reflecting: child.value).children)
                guard pair.count == 2 else { continue }
                object[masked("\(pair[0].value)", secrets)] = value(of: pair[1].value, secrets: secrets, depth: depth + 1)
            }
            return object
        case .collection:
            return mirror.children.map { value(of: $0.value, secrets: secrets, depth: depth + 1) }
        case .set:
            return mirror.children.map { value(of: $0.value, secrets: secrets, depth: depth + 1) }
                .sorted { "\($0)" < "\($1)" }
        case .enum:
            let name = String(describing: subject).prefix { $0 != "(" }
            guard let payload = mirror.children.first else { return String(name) }
            let label = payload.label ?? String(name)
            return [label: isSecret(label) ? mask : value(of: payload.value, secrets: secrets, depth: depth + 1)]
        case .tuple:
            let children = Array(mirror.children)
            if children.allSatisfy({ $0.label == nil || $0.label!.hasPrefix(".") }) {
                return children.map { value(of: $0.value, secrets: secrets, depth: depth + 1) }
            }
            return object(children, secrets: secrets, depth: depth)
        case .struct, .class:
            return object(Array(mirror.children), secrets: secrets, depth: depth)
        default:
            return masked(String(describing: subject), secrets)
        }
    }

    private static func object(_ children: [Mirror.Child], secrets: [String], depth: Int) -> [String: Any] {
        var object: [String: Any] = [:]
        for (index, child) in children.enumerated() {
            let label = child.label.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 } ?? "\(index)"
            let shown = value(of: child.value, secrets: secrets, depth: depth + 1)
            object[label] = isSecret(label) && !(shown is NSNull) ? mask : shown
        }
        return object
    }

    /// Whether a field of this name holds a secret.
    static func isSecret(_ label: String) -> Bool {
        let name = label.lowercased()
        return ["secret", "token", "key"].contains { name.hasSuffix($0) } || name.contains("password")
            || ["credentials", "authorization"].contains(name)
    }

    private static func masked(_ text: String, _ secrets: [String]) -> String {
        // Short secrets (the sandbox's "sandbox") would mask every text that happens to hold
        // them; the fields that hold secrets are masked by name anyway.
        secrets.contains { $0.count >= 8 && text.contains($0) } ? mask : text
    }
}
