import Foundation

/// One delivery the sandbox's webhook receiver (`/_sandbox/webhooks`) got: its Standard
/// Webhooks headers, every header field, its body exactly as sent, and what the receiver made
/// of it.
public struct SandboxWebhookDelivery: Sendable, Hashable {
    /// One header field as it arrived.
    public struct Header: Sendable, Hashable {
        /// The name, in the case sent.
        public var name: String
        /// The value.
        public var value: String
    }

    /// `webhook-id`, if sent.
    public var id: String?
    /// `webhook-timestamp`, if sent.
    public var timestamp: String?
    /// `webhook-signature`, if sent.
    public var signature: String?
    /// `Content-Type`, if sent.
    public var contentType: String?
    /// Every header field, in the order sent (the extra `headers` of a webhook service among them).
    public var headers: [Header] = []
    /// The body, byte for byte.
    public var body: Data
    /// Whether it was answered 200.
    public var accepted: Bool
    /// Whether a signature was checked and matched (false when the sandbox has no secret).
    public var verified: Bool
    /// Whether its `webhook-id` had been accepted before.
    public var duplicate: Bool
    /// Why it was refused, when it was.
    public var reason: String?
}
