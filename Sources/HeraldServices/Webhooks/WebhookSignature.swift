import Foundation
import HeraldIO

/// The Standard Webhooks headers of one delivery: `webhook-id`, `webhook-timestamp` and
/// `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
public struct WebhookSignature: Sendable, Hashable {
    /// `webhook-id`.
    public var id: String
    /// `webhook-timestamp`: seconds since the epoch.
    public var timestamp: Int64
    /// `webhook-signature`: `v1,` and the code in base64; nil without a secret.
    public var signature: String?

    /// Signs `body` as message `id` at `timestamp`.
    ///
    /// - Throws: ``SystemCryptoError`` when the system's HMAC-SHA256 cannot be loaded.
    public init(id: String, timestamp: Int64, body: Data, secret: WebhookSecret?) throws(SystemCryptoError) {
        self.id = id
        self.timestamp = timestamp
        guard let secret else {
            signature = nil
            return
        }
        let hmac = try HMACSHA256()
        let code = hmac.authenticationCode(key: secret.key, message: Array("\(id).\(timestamp).".utf8) + [UInt8](body))
        guard code.count == HMACSHA256.byteCount else { throw SystemCryptoError("the system's HMAC-SHA256 failed to sign a webhook") }
        signature = "v1," + Data(code).base64EncodedString()
    }

    /// The three headers (two without a secret).
    public var headers: [(name: String, value: String)] {
        var fields = [("webhook-id", id), ("webhook-timestamp", String(timestamp))]
        if let signature { fields.append(("webhook-signature", signature)) }
        return fields
    }

    /// Herald's idempotency key as a `webhook-id`: the same key always gives the same id, and
    /// the id holds no `.` (the specification: ids must "not be allowed to include any `.`",
    /// the separator of the signed content), no white space and nothing outside ASCII. Every
    /// other byte than letters, digits, `-`, `_` and `:` is written `%XX`.
    public static func messageID(forKey key: String) -> String {
        var id = ""
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"):
                id.unicodeScalars.append(UnicodeScalar(byte))
            default:
                id += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return id
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
