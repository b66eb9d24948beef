import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing

extension PostHarness {
    static let webhookSecret = WebhookSecret(key: Array("the sandbox receiver's 32-byte key".utf8))

    func webhookScheduler(transport: (any HTTPTransport)? = nil, retry: PostScheduler.RetryPolicy = .init(),
                          headers: [String: String] = [:]) throws -> PostScheduler {
        let body = try WebhookBodyTemplate(.object(["text": .string("New todo: {{description}}"), "id": .string("{{_id}}")]))
        let rule = PostRule(name: "hook", on: "loader.todos.finished", scope: .newItems, service: "hook", target: .webhook(body))
        let client = WebhookClient(url: sandbox.baseURL.appendingPathComponent("_sandbox/webhooks"), secret: Self.webhookSecret,
                                   headers: headers, timeout: .seconds(120), transport: transport ?? self.transport)
        return scheduler([rule], services: ["hook": WebhookPostService(client: client)], retry: retry)
    }
}

/// Gives the first request a short deadline and the others their own.
final class FirstAttemptDeadline: HTTPTransport {
    private let base: any HTTPTransport
    private let deadline: Duration
    private let first = SyncLock(true)

    init(_ base: any HTTPTransport, _ deadline: Duration) {
        self.base = base
        self.deadline = deadline
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if first.withLock({ isFirst in defer { isFirst = false }; return isFirst }) { request.timeout = deadline }
        return try await base.send(request)
    }
}

/// Webhook posts through the post scheduler and its outbox: the rule's retry policy for 5xx
/// and slow receivers, `Retry-After` for 429, 410 the end.
@Suite(.timeLimit(.minutes(5))) struct WebhookPostTests {
    static func configure(_ configuration: inout SandboxConfiguration) {
        configuration.webhookSecret = PostHarness.webhookSecret.key
    }

    @Test func aNewItemIsDeliveredOnceWithItsKeyAsWebhookID() async throws {
        try await PostHarness.run(Self.configure) { harness in
            let scheduler = try harness.webhookScheduler()
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["buy \"milk\" 🥛\n", "call mum"]))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            await running.stop()
            let deliveries = harness.sandbox.webhookDeliveries()
            #expect(deliveries.count == 2 && deliveries.allSatisfy { $0.verified })
            let bodies = deliveries.compactMap { try? JSONSerialization.jsonObject(with: $0.body) as? [String: String] }
            #expect(bodies == [["text": "New todo: buy \"milk\" 🥛\n", "id": "t1"], ["text": "New todo: call mum", "id": "t2"]])
            let sent = harness.recorder.events(PostSent.self)
            #expect(sent.map(\.id) == deliveries.map(\.id))
            #expect(sent.map { WebhookSignature.messageID(forKey: $0.key) } == deliveries.compactMap(\.id))
        }
    }

    @Test func theExtraHeadersArriveAndTheSecretInNone() async throws {
        try await PostHarness.run(Self.configure) { harness in
            let headers = ["X-Team": "ops", "Authorization": "Bearer abc"]
            let scheduler = try harness.webhookScheduler(headers: headers)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["with headers"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
            let delivery = try #require(harness.sandbox.webhookDeliveries().first)
            #expect(delivery.verified)
            for (name, value) in headers {
                #expect(delivery.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) == [value], "\(delivery.headers)")
            }
            // Signed with the key, never carrying it: not as bytes, not in base64.
            let key = PostHarness.webhookSecret.key
            let keyText = String(decoding: key, as: UTF8.self), keyBase64 = Data(key).base64EncodedString()
            #expect(delivery.headers.contains { $0.name.lowercased() == "webhook-signature" })
            #expect(!delivery.headers.contains { $0.value.contains(keyText) || $0.value.contains(keyBase64) }, "\(delivery.headers)")
        }
    }

    @Test func serverErrorsAreRetriedWithTheRulesBackoffUnderOneID() async throws {
        try await PostHarness.run(Self.configure) { harness in
            try harness.sandbox.script(path: "/_sandbox/webhooks", method: "POST", [.status(500), .status(502)])
            let scheduler = try harness.webhookScheduler()
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["retry me"]))
            for _ in 0..<2 {
                await harness.clock.waitForSleepers()
                harness.clock.advance(by: .seconds(60))
            }
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
            #expect(harness.recorder.events(PostSent.self).first?.attempts == 3)
            #expect(harness.sandbox.webhookDeliveries().count == 1)
        }
    }

    @Test func aSlowReceiverTimesOutAndIsRetried() async throws {
        try await PostHarness.run(Self.configure) { harness in
            try harness.sandbox.script(path: "/_sandbox/webhooks", method: "POST", [.delay(.seconds(60))])
            // Only the first attempt has a short deadline, so the retry's success does not
            // depend on how fast a busy machine answers.
            let scheduler = try harness.webhookScheduler(transport: FirstAttemptDeadline(harness.transport, .milliseconds(300)))
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["slowly"]))
            await harness.clock.waitForSleepers()  // the backoff after the timed-out attempt
            harness.clock.advance(by: .seconds(60))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
            #expect(harness.recorder.events(PostSent.self).first?.attempts == 2)
        }
    }

    @Test func tooManyRequestsWaitsAndGoneFails() async throws {
        try await PostHarness.run(Self.configure) { harness in
            try harness.sandbox.script(path: "/_sandbox/webhooks", method: "POST", [.status(429), .status(410)])
            let scheduler = try harness.webhookScheduler()
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["first"]))
            await harness.clock.waitForSleepers()  // until Retry-After
            harness.clock.advance(by: .seconds(60))
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            await running.stop()
            let failed = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failed.status == 410 && failed.reason.contains("the endpoint is gone"), "\(failed.reason)")
            #expect(harness.sandbox.webhookDeliveries().isEmpty)
        }
    }
}
