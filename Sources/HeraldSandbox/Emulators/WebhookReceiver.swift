import Foundation
import HeraldIO

/// The sandbox's webhook endpoint, `POST /_sandbox/webhooks`: checks each delivery as a
/// Standard Webhooks receiver would and records it; `GET /_sandbox/webhooks` lists the
/// deliveries, `DELETE` forgets them.
///
/// With ``SandboxConfiguration/webhookSecret`` set, a delivery must carry `webhook-id`,
/// `webhook-timestamp` within five minutes of the sandbox's clock and a `webhook-signature`
/// holding a `v1,` signature that matches; otherwise it is answered 400 or 401 (and recorded as
/// refused, with the reason). Without a secret, deliveries are recorded unverified. A delivery
/// whose `webhook-id` was accepted before is answered 200 again and counted as a duplicate, as a
/// receiver deduplicating on the id would. The body must be JSON. Faults apply to `POST` like to
/// any service path (it can be scripted at `/_sandbox/webhooks`).
final class WebhookReceiver: Sendable {
    typealias Delivery = SandboxWebhookDelivery

    /// The most deliveries kept (oldest forgotten first).
    static let limit = 1_000
    /// How far `webhook-timestamp` may be from the sandbox's clock.
    static let tolerance: TimeInterval = 300

    let configuration: SandboxConfiguration
    private let state = Locked<(deliveries: [Delivery], acceptedIDs: Set<String>)>(([], []))

    init(configuration: SandboxConfiguration) {
        self.configuration = configuration
    }

    func receive(_ request: SandboxRequest) -> SandboxResponse {
        guard request.method == "POST" else {
            return .json(405, .object([("error", .string("POST a delivery, GET the list, DELETE to clear"))]), headers: [("Allow", "GET, POST, DELETE")])
        }
        var delivery = Delivery(id: request.header("webhook-id"), timestamp: request.header("webhook-timestamp"),
                                signature: request.header("webhook-signature"), contentType: request.header("Content-Type"),
                                headers: request.headers.map { Delivery.Header(name: $0.name, value: $0.value) }, body: request.body, accepted: false, verified: false, duplicate: false)
        let (status, reason) = check(delivery)
        delivery.reason = reason
        delivery.accepted = status == 200
        delivery.verified = delivery.accepted && configuration.webhookSecret != nil
        return state.withLock { state in
            if delivery.accepted, let id = delivery.id { delivery.duplicate = !state.acceptedIDs.insert(id).inserted }
            state.deliveries.append(delivery)
            if state.deliveries.count > Self.limit { state.deliveries.removeFirst(state.deliveries.count - Self.limit) }
            if delivery.accepted {
                return .json(200, .object([("received", .bool(true)), ("duplicate", .bool(delivery.duplicate))]))
            }
            return .json(status, .object([("error", .string(reason ?? "refused"))]))
        }
    }

    /// The status to answer and, when refused, why.
    private func check(_ delivery: Delivery) -> (Int, String?) {
        guard (try? JSONSerialization.jsonObject(with: delivery.body, options: [.fragmentsAllowed])) != nil else {
            return (400, "the body is not JSON")
        }
        guard let key = configuration.webhookSecret else { return (200, nil) }
        guard let id = delivery.id, !id.isEmpty else { return (400, "no webhook-id header") }
        guard let timestampText = delivery.timestamp, let timestamp = Int64(timestampText) else {
            return (400, "no webhook-timestamp header, or not an integer")
        }
        let now = configuration.now().timeIntervalSince1970
        guard abs(now - Double(timestamp)) <= Self.tolerance else { return (401, "webhook-timestamp is more than 5 minutes away") }
        guard let header = delivery.signature else { return (401, "no webhook-signature header") }
        let message = Array("\(id).\(timestampText).".utf8) + [UInt8](delivery.body)
        guard let hmac = try? HMACSHA256() else { return (500, "the sandbox cannot load libcrypto to verify signatures") }
        let expected = hmac.authenticationCode(key: key, message: message)
        let offered = header.split(separator: " ").compactMap { entry -> [UInt8]? in
            let parts = entry.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let data = Data(base64Encoded: String(parts[1])) else { return nil }
            return [UInt8](data)
        }
        let matches = offered.contains { HMACSHA256.constantTimeEquals($0, expected) }
        return matches ? (200, nil) : (401, "no v1 signature in webhook-signature matches")
    }

    /// `GET /_sandbox/webhooks`: every delivery, oldest first, with its header fields
    /// (`[{"name", "value"}]`, as sent) and its body as sent.
    func list() -> SandboxResponse {
        let deliveries = state.withLock { $0.deliveries }.map { delivery -> SandboxJSON in
            func optional(_ text: String?) -> SandboxJSON { text.map { .string($0) } ?? .null }
            return .object([
                ("id", optional(delivery.id)), ("timestamp", optional(delivery.timestamp)), ("signature", optional(delivery.signature)),
                ("contentType", optional(delivery.contentType)),
                ("headers", .array(delivery.headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })),
                ("body", .string(String(decoding: delivery.body, as: UTF8.self))),
                ("accepted", .bool(delivery.accepted)), ("verified", .bool(delivery.verified)), ("duplicate", .bool(delivery.duplicate)),
                ("reason", optional(delivery.reason)),
            ])
        }
        return .json(200, .object([("deliveries", .array(deliveries))]))
    }

    /// `DELETE /_sandbox/webhooks`.
    func clear() -> SandboxResponse {
        state.withLock { $0 = ([], []) }
        return .json(200, .object([("cleared", .bool(true))]))
    }

    /// The deliveries so far, oldest first.
    func deliveries() -> [Delivery] {
        state.withLock { $0.deliveries }
    }
}
