import Foundation

/// Removes secrets from text before it is printed: every configured secret value, and the
/// values of OAuth parameters that are secret or signed (`oauth_signature`, `oauth_token`, …).
public struct Redactor: Sendable, Hashable {
    /// What replaces a secret.
    public static let mask = "[redacted]"
    private let secrets: [String]
    private static let parameters = ["oauth_signature", "oauth_token", "oauth_consumer_key", "oauth_nonce"]

    /// Creates a redactor for these secret values (values shorter than 3 characters are ignored:
    /// masking them would garble ordinary text).
    public init(secrets: [String] = []) {
        self.secrets = Set(secrets.filter { $0.count >= 3 }).sorted { $0.count > $1.count }
    }

    /// `text` with every secret masked.
    public func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.mask)
        }
        for parameter in Self.parameters where result.contains(parameter) {
            result = Self.maskValues(of: parameter, in: result)
        }
        return result
    }

    /// Masks what follows `name=` (optionally quoted) up to a separator.
    private static func maskValues(of name: String, in text: String) -> String {
        var output = ""
        var rest = Substring(text)
        while let range = rest.range(of: name + "=") {
            output += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let quoted = rest.first == "\""
            if quoted { output += "\""; rest = rest.dropFirst() }
            let end = rest.firstIndex { $0 == "&" || $0 == "," || $0 == " " || $0 == "\"" } ?? rest.endIndex
            output += mask
            rest = rest[end...]
        }
        return output + rest
    }
}
