import Foundation
import HeraldServices

/// Deliveries to a webhook: the intent's rendered JSON body POSTed through a
/// ``WebhookClient``, signed as Standard Webhooks says, with the intent's idempotency key as
/// `webhook-id`, so a receiver can drop a delivery it already has (the outbox may send an
/// intent again after a crash, before its answer was recorded).
///
/// 410 Gone ends the intent as failed with the reason; 429 waits for `Retry-After`; 5xx, a
/// timeout and a lost connection are retried with the rule's backoff; any other answer that is
/// not 2xx (a redirect other than 307 / 308 included) fails.
public struct WebhookPostService: PostService {
    /// The client.
    public var client: WebhookClient

    /// Creates the service.
    public init(client: WebhookClient) {
        self.client = client
    }

    /// Delivers the intent; returns the `webhook-id` sent.
    public func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        guard case .webhook(let body) = intent.content else {
            throw PostServiceError("service \"\(intent.service)\" is a webhook; it delivers JSON bodies, not statuses or objects")
        }
        return try await client.deliver(key: intent.key, body: Data(body.utf8))
    }
}
