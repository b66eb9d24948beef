import Foundation

/// A Standard Webhooks signing secret: `whsec_` followed by the key in base64.
///
/// The Standard Webhooks specification (https://www.standardwebhooks.com, "Signature scheme")
/// serialises symmetric secrets "base64 encoded, prefixed with `whsec_`", random and "at least
/// 24 bytes (192 bits, 512 maximum)"; the HMAC key is the decoded bytes. `description` never
/// shows the key.
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    /// The prefix every secret is written with.
    public static let prefix = "whsec_"
    /// The fewest key bytes accepted.
    public static let minimumBytes = 24
    /// The most key bytes accepted.
    public static let maximumBytes = 64

    /// The HMAC key.
    public let key: [UInt8]

    /// Reads `whsec_<base64>`.
    /// - Throws: ``WebhookSecretError`` saying what is wrong, never quoting the secret.
    public init(_ text: String) throws(WebhookSecretError) {
        guard text.hasPrefix(Self.prefix) else { throw WebhookSecretError("does not start with \"whsec_\"") }
        let encoded = String(text.dropFirst(Self.prefix.count))
        guard !encoded.isEmpty else { throw WebhookSecretError("has no key after \"whsec_\"") }
        guard let key = Data(base64Encoded: encoded) else {
            throw WebhookSecretError("is not valid base64 after \"whsec_\" (letters, digits, + and /, padded with = to a multiple of 4 characters)")
        }
        guard key.count >= Self.minimumBytes, key.count <= Self.maximumBytes else {
            throw WebhookSecretError("decodes to \(key.count) bytes; the Standard Webhooks specification asks for \(Self.minimumBytes) to \(Self.maximumBytes)")
        }
        self.key = [UInt8](key)
    }

    /// Wraps raw key bytes (any length; for tests and generated secrets).
    public init(key: [UInt8]) {
        self.key = key
    }

    /// The secret as written: `whsec_` and the key in base64.
    public var serialized: String { Self.prefix + Data(key).base64EncodedString() }

    /// `whsec_…` with the key hidden.
    public var description: String { "whsec_(\(key.count) bytes, not shown)" }
}

/// Why a text is not a webhook secret; never quotes it.
public struct WebhookSecretError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as the end of a sentence whose subject is the secret.
    public var reason: String

    init(_ reason: String) { self.reason = reason }

    /// `the secret …`, for a config error.
    public var description: String { "the secret \(reason)" }
}
