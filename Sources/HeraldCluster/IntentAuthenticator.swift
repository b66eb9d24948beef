import HeraldIO
import HeraldServices

/// Signs the post intents a node puts on the cluster's post queue and checks them where they
/// are taken, so that a node posts only what a node holding the cluster's secret asked for.
///
/// Anyone who may publish on the cluster's NATS account can put a message on
/// `herald-posts.<rule>`; without this, such a message would be posted as if a loader had
/// announced it. The code is HMAC-SHA256 (from the system's library) under the cluster's intent
/// secret, over the subject, the message id and the body, each length-prefixed, so no field can
/// be moved into another. It travels in the `Herald-Intent-Signature` header as
/// `v1=<key id>:<code>`, both hex; the key id (the first 8 bytes of a code of a fixed text under
/// the secret) tells a message signed with another secret (a node configured differently: the
/// message is left for a node that has that secret) from a forged or altered one (refused for
/// good), without showing anything of the secret.
///
/// It does not stop a replay of a message signed before: the message id is the post's
/// idempotency key, so a replayed intent is found in the dedupe window or by its post record
/// and posted at most once.
public struct IntentAuthenticator: Sendable {
    /// The header that carries the code.
    public static let header = "Herald-Intent-Signature"
    /// The scheme written before the code (a later scheme can be told apart).
    public static let version = "v1"
    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 32

    /// What a message's signature says.
    public enum Verdict: Sendable, Hashable {
        /// Signed with this node's secret, unchanged.
        case authentic
        /// No signature header.
        case unsigned
        /// Signed under another secret, whose key id this is: a node configured differently.
        case otherSecret(keyID: String)
        /// Claims this node's key but the code does not match (altered or forged), or the header
        /// cannot be read.
        case forged
    }

    private let key: [UInt8]
    private let hmac: HMACSHA256
    /// This secret's key id (hex).
    public let keyID: String

    /// An authenticator under `secret` (its UTF-8 bytes are the key); throws when the system
    /// has no working HMAC-SHA256 implementation.
    public init(secret: String) throws(SystemCryptoError) {
        self.key = Array(secret.utf8)
        self.hmac = try HMACSHA256()
        self.keyID = Self.hex(Array(hmac.authenticationCode(key: key, message: Array("herald intent key id".utf8)).prefix(8)))
    }

    /// `message` with its signature header set (any earlier one replaced).
    public func signed(_ message: ClusterMessage) -> ClusterMessage {
        var message = message
        message.headers.removeAll { $0.name.lowercased() == Self.header.lowercased() }
        message.headers.append(.init(Self.header, "\(Self.version)=\(keyID):" + Self.hex(code(message))))
        return message
    }

    /// Whether `message` carries a valid signature of its subject, message id and body.
    public func isAuthentic(_ message: ClusterMessage) -> Bool {
        verdict(message) == .authentic
    }

    /// What `message`'s signature says (the first signature header counts).
    public func verdict(_ message: ClusterMessage) -> Verdict {
        guard let value = message.header(Self.header) else { return .unsigned }
        guard value.hasPrefix("\(Self.version)=") else { return .forged }
        let parts = value.dropFirst(Self.version.count + 1).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let id = Self.bytes(fromHex: parts[0], count: 8),
              let received = Self.bytes(fromHex: parts[1], count: HMACSHA256.byteCount) else { return .forged }
        let claimed = Self.hex(id)
        guard claimed == keyID else { return .otherSecret(keyID: claimed) }
        return HMACSHA256.constantTimeEquals(received, code(message)) ? .authentic : .forged
    }

    private func code(_ message: ClusterMessage) -> [UInt8] {
        var input: [UInt8] = []
        for field in [Array(message.subject.utf8), Array((message.header(ClusterEventCodec.messageIDHeader) ?? "").utf8), message.payload] {
            withUnsafeBytes(of: UInt64(field.count).bigEndian) { input.append(contentsOf: $0) }
            input.append(contentsOf: field)
        }
        return hmac.authenticationCode(key: key, message: input)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(fromHex text: Substring, count: Int) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 2 * count else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
