import Foundation

/// Reads typed values out of parsed JSON, collecting every problem with its path instead of
/// stopping at the first.
final class ConfigReader {
    private(set) var issues: [ConfigIssue] = []
    let environment: [String: String]
    private(set) var secrets: [String] = []

    init(environment: [String: String]) {
        self.environment = environment
    }

    func report(_ path: String, _ message: String) {
        issues.append(ConfigIssue(path: path, message: message))
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Whether the value at `path` is, or holds, a secret: under `auth`, or a key naming a key,
    /// a token, a secret or a password (`consumerKey`, `tokenSecret`, `appKey`, `clientKey`).
    static func isSecret(_ path: String) -> Bool {
        path.split(separator: ".").contains { component in
            let key = component.prefix { $0 != "[" }.lowercased()
            return key == "auth" || key.hasSuffix("key") || key.contains("secret") || key.contains("token") || key.contains("password")
        }
    }

    /// How the value at `path` is described in an error: its type where it may be a secret,
    /// else itself when short.
    func shown(_ value: ConfigJSON, at path: String) -> String {
        Self.isSecret(path) ? value.typeDescription : value.shown
    }

    /// A string value quoted for an error, or `the value` where it may be a secret.
    func quoted(_ text: String, at path: String) -> String {
        Self.isSecret(path) ? "the value" : "\"\(text)\""
    }

    /// The value as an object, or nil after reporting; unknown keys are reported too.
    func object(_ value: ConfigJSON, at path: String, allowed: [String]) -> [String: ConfigJSON]? {
        guard case .object(let object) = value else {
            report(path, "expected an object, got \(shown(value, at: path))")
            return nil
        }
        for key in object.keys.sorted() where !allowed.contains(key) {
            var message = "unknown key"
            if let guess = Self.closest(to: key, in: allowed) { message += " (did you mean \"\(guess)\"?)" }
            report(Self.join(path, key), message)
        }
        return object
    }

    func string(_ object: [String: ConfigJSON], _ key: String, at path: String, required: Bool = false) -> String? {
        let here = Self.join(path, key)
        switch object[key] {
        case nil:
            if required { report(here, "required") }
            return nil
        case .string(let value)?:
            if value.isEmpty { report(here, "must not be empty"); return nil }
            return value
        case let other?:
            report(here, "expected a string, got \(shown(other, at: here))")
            return nil
        }
    }

    func choice(_ object: [String: ConfigJSON], _ key: String, at path: String, among choices: [String], required: Bool = false) -> String? {
        guard let value = string(object, key, at: path, required: required) else { return nil }
        guard choices.contains(value) else {
            report(Self.join(path, key), "\(quoted(value, at: Self.join(path, key))) is not one of \(choices.joined(separator: ", "))")
            return nil
        }
        return value
    }

    func integer(_ object: [String: ConfigJSON], _ key: String, at path: String, in range: ClosedRange<Int>) -> Int? {
        let here = Self.join(path, key)
        guard let value = object[key] else { return nil }
        guard let number = value.doubleValue, number == number.rounded(), abs(number) < 1e15 else {
            report(here, "expected an integer, got \(shown(value, at: here))")
            return nil
        }
        guard range.contains(Int(number)) else {
            report(here, "\(shown(value, at: here)) is not in \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return Int(number)
    }

    func fraction(_ object: [String: ConfigJSON], _ key: String, at path: String) -> Double? {
        let here = Self.join(path, key)
        guard let value = object[key] else { return nil }
        guard let number = value.doubleValue else {
            report(here, "expected a number, got \(shown(value, at: here))")
            return nil
        }
        guard (0...1).contains(number) else {
            report(here, "\(shown(value, at: here)) is not in 0...1")
            return nil
        }
        return number
    }

    func duration(_ object: [String: ConfigJSON], _ key: String, at path: String, required: Bool = false,
                  positive: Bool = false) -> Duration? {
        let here = Self.join(path, key)
        guard let value = object[key] else {
            if required { report(here, "required") }
            return nil
        }
        guard case .string(let text) = value else {
            report(here, "expected a duration such as \"30s\", got \(shown(value, at: here))")
            return nil
        }
        guard let duration = DurationText.parse(text) else {
            report(here, "\(shown(value, at: here)) is not a duration")
            return nil
        }
        if positive && duration <= .zero {
            report(here, "must be longer than 0")
            return nil
        }
        return duration
    }

    /// `"sandbox"` or an absolute http(s) URL, with a port the HTTP client can connect to when
    /// one is written (a port `URL` cannot read would otherwise become port 80).
    func endpoint(_ object: [String: ConfigJSON], _ key: String, at path: String, required: Bool) -> Endpoint? {
        guard let text = string(object, key, at: path, required: required) else { return nil }
        if text == "sandbox" { return .sandbox }
        let here = Self.join(path, key)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            report(here, "\(quoted(text, at: here)) is not \"sandbox\" or an http(s) URL")
            return nil
        }
        if let port = Self.writtenPort(text), !port.isEmpty, !(1...65535).contains(url.port ?? 0) {
            report(here, "\(quoted(text, at: here)): the port is not in 1...65535")
            return nil
        }
        return .url(url)
    }

    /// The authority of a URL as written (`user@host:port`), nil when there is no `://`.
    static func authority(_ text: String) -> Substring? {
        guard let start = text.range(of: "://")?.upperBound else { return nil }
        return text[start...].prefix { !"/?#".contains($0) }
    }

    /// The port as written in a URL's authority (`"8080"`; empty after a bare `:`), nil when
    /// there is none.
    static func writtenPort(_ text: String) -> Substring? {
        guard var authority = authority(text) else { return nil }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") { authority = authority[authority.index(after: close)...] }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return authority[authority.index(after: colon)...]
    }

    /// A string, or `{"env": NAME, "default": value}` read from the environment.
    func secret(_ object: [String: ConfigJSON], _ key: String, at path: String) -> String? {
        let here = Self.join(path, key)
        let value: String?
        switch object[key] {
        case nil:
            report(here, "required")
            return nil
        case .string?:
            value = string(object, key, at: path)
        case .object(let reference)?:
            guard let fields = self.object(.object(reference), at: here, allowed: ["env", "default"]) else { return nil }
            let name = string(fields, "env", at: here, required: true)
            let fallback = string(fields, "default", at: here)
            if let name, let found = environment[name], !found.isEmpty {
                value = found
            } else if let fallback {
                value = fallback
            } else {
                // A default written but invalid is reported already.
                if let name, fields["default"] == nil { report(here, "environment variable \(name) is not set and there is no default") }
                value = nil
            }
        case let other?:
            report(here, "expected a string or {\"env\": \"NAME\", \"default\": \"…\"}, got \(other.typeDescription)")
            return nil
        }
        if let value { secrets.append(value) }
        return value
    }

    /// The allowed key nearest to `key` within two edits, if any.
    static func closest(to key: String, in allowed: [String]) -> String? {
        let scored = allowed.map { ($0, distance(Array(key.lowercased()), Array($0.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
