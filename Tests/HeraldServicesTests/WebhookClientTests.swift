import Foundation
import HeraldHTTP
import HeraldSandbox
import HeraldSync
import HeraldTestSupport
import Testing

@testable import HeraldServices

/// The webhook client against the sandbox's receiver (which verifies signatures with its own
/// code), a local server for redirects, and the `standardwebhooks` package (PyPI) as the
/// independent judge of the signatures.
@Suite struct WebhookClientTests {
    static let secret = WebhookSecret(key: Array("a secret of at least 24 bytes!!".utf8))

    static func sandbox(secret: WebhookSecret? = WebhookClientTests.secret) async throws -> Sandbox {
        var configuration = SandboxConfiguration()
        configuration.webhookSecret = secret?.key
        return try await Sandbox.start(configuration)
    }

    static func client(_ sandbox: Sandbox, secret: WebhookSecret? = WebhookClientTests.secret, timeout: Duration? = nil) -> WebhookClient {
        WebhookClient(url: sandbox.baseURL.appendingPathComponent("_sandbox/webhooks"), secret: secret, timeout: timeout)
    }

    @Test func aDeliveryIsSignedAndTheReceiverVerifiesIt() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let body = Data(#"{"text":"héllo \"world\"\n"}"#.utf8)
        let id = try await Self.client(sandbox).deliver(key: "news:item:loader.feed:https://example.com/a?b=1", body: body)
        let delivery = try #require(sandbox.webhookDeliveries().first)
        #expect(delivery.accepted && delivery.verified && !delivery.duplicate, "\(delivery.reason ?? "")")
        #expect(delivery.id == id && !id.contains("."))
        #expect(delivery.body == body)
        #expect(delivery.contentType == "application/json")
        #expect(delivery.signature?.hasPrefix("v1,") == true)
    }

    @Test func theSameKeyIsTheSameWebhookIDSoTheReceiverDropsTheRepeat() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let client = Self.client(sandbox)
        try await client.deliver(key: "rule:event:1", body: Data("{}".utf8))
        try await client.deliver(key: "rule:event:1", body: Data("{}".utf8))
        #expect(sandbox.webhookDeliveries().map(\.duplicate) == [false, true])
        #expect(WebhookSignature.messageID(forKey: "a.b c/é%") == "a%2Eb%20c%2F%C3%A9%25")
    }

    @Test func aWrongSecretIsRefusedByTheReceiver() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let wrong = WebhookSecret(key: Array("another secret, 24 bytes or more".utf8))
        let error = try await #require(throws: ServiceError.self) {
            try await Self.client(sandbox, secret: wrong).deliver(key: "k", body: Data("{}".utf8))
        }
        #expect(error.status == 401)
        #expect(sandbox.webhookDeliveries().first?.reason == "no v1 signature in webhook-signature matches")
    }

    @Test func goneIsAFailureThatSaysTheEndpointIsGone() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/_sandbox/webhooks", method: "POST", [.status(410), .status(429), .status(503)])
        let client = Self.client(sandbox)
        let gone = try await #require(throws: ServiceError.self) { try await client.deliver(key: "k", body: Data("{}".utf8)) }
        #expect(gone.kind == .httpStatus && gone.status == 410 && gone.message.contains("endpoint is gone"))
        let limited = try await #require(throws: ServiceError.self) { try await client.deliver(key: "k", body: Data("{}".utf8)) }
        #expect(limited.kind == .rateLimited && limited.rateLimit?.reset != nil)
        let unavailable = try await #require(throws: ServiceError.self) { try await client.deliver(key: "k", body: Data("{}".utf8)) }
        #expect(unavailable.kind == .httpStatus && unavailable.status == 503)
        #expect(sandbox.webhookDeliveries().isEmpty)
    }

    @Test func aSlowReceiverCostsOneBoundedAttempt() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        try sandbox.script(path: "/_sandbox/webhooks", method: "POST", [.delay(.seconds(30))])
        let error = try await #require(throws: ServiceError.self) {
            try await Self.client(sandbox, timeout: .milliseconds(300)).deliver(key: "k", body: Data("{}".utf8))
        }
        #expect(error.kind == .timeout)
    }

    @Test func aPOSTFollows307And308ButNotOtherRedirects() async throws {
        let received = SyncLock<[(path: String, method: String, body: Data, signature: String?)]>([])
        let server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
            received.withLock { $0.append((request.path, request.method, request.body, request.header("webhook-signature"))) }
            switch request.path {
            case "/temporary": return HTTPServerResponse(status: 307, headers: [("Location", "/final")], body: Data())
            case "/permanent": return HTTPServerResponse(status: 308, headers: [("Location", "/temporary")], body: Data())
            case "/found": return HTTPServerResponse(status: 302, headers: [("Location", "/final")], body: Data())
            case "/moved": return HTTPServerResponse(status: 301, headers: [("Location", "/final")], body: Data())
            default: return HTTPServerResponse(status: 204, headers: [], body: Data())
            }
        })
        server.start()
        defer { Task { await server.stop() } }
        let base = "http://127.0.0.1:\(server.port)"
        let body = Data(#"{"n":1}"#.utf8)
        try await WebhookClient(url: URL(string: base + "/permanent")!, secret: Self.secret).deliver(key: "k", body: body)
        #expect(received.withLock { $0.map(\.path) } == ["/permanent", "/temporary", "/final"])
        #expect(received.withLock { $0.allSatisfy { $0.method == "POST" && $0.body == body && $0.signature != nil } })
        for path in ["/found", "/moved"] {
            let error = try await #require(throws: ServiceError.self) {
                try await WebhookClient(url: URL(string: base + path)!, secret: Self.secret).deliver(key: "k", body: body)
            }
            #expect(error.message.contains("a POST is followed only on 307 or 308"), "\(error)")
        }
        #expect(received.withLock { $0.map(\.path) }.suffix(2) == ["/found", "/moved"])
    }

    @Test func aSecretMustBeWhsecAndBase64OfTwentyFourToSixtyFourBytes() throws {
        #expect(try WebhookSecret(Self.secret.serialized).key == Self.secret.key)
        for (text, reason) in [("abc", "does not start with"), ("whsec_", "no key"), ("whsec_not base64!", "not valid base64"),
                               ("whsec_" + Data(count: 8).base64EncodedString(), "decodes to 8 bytes")] {
            let error = try #require(throws: WebhookSecretError.self) { try WebhookSecret(text) }
            #expect(error.description.contains(reason), "\(error)")
            #expect(!error.description.contains("base64!"))
        }
        #expect(!Self.secret.description.contains(Self.secret.serialized.dropFirst(6)))
    }

    static let verifier = #"""
import json, sys, urllib.request
from standardwebhooks.webhooks import Webhook

base, secret = sys.argv[1], sys.argv[2]
deliveries = json.load(urllib.request.urlopen(base + "/_sandbox/webhooks"))["deliveries"]
wh = Webhook(secret)
out = []
for d in deliveries:
    headers = {"webhook-id": d["id"], "webhook-timestamp": d["timestamp"], "webhook-signature": d["signature"]}
    out.append(wh.verify(d["body"].encode("utf-8"), headers))
print(json.dumps(out))
"""#

    @Test(.enabled(if: !PythonClients.skipped, "HERALD_SKIP_PYTHON_CLIENTS=1"))
    func standardwebhooksVerifiesWhatHeraldSigns() async throws {
        let sandbox = try await Self.sandbox()
        defer { Task { await sandbox.stop() } }
        let bodies = [#"{"text":"plain"}"#, #"{"text":"日本語 🎉 \"quoted\" \\ back\nslash","n":[1,2.5,null]}"#, "[]"]
        for (index, body) in bodies.enumerated() {
            try await Self.client(sandbox).deliver(key: "rule:item:loader.feed:https://example.com/\(index)", body: Data(body.utf8))
        }
        let output = try await PythonClients.run(Self.verifier, [sandbox.baseURL.absoluteString, Self.secret.serialized])
        try #require(output.status == 0, "standardwebhooks refused a signature: \(output.stderr)")
        let verified = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [Any]
        #expect(verified?.count == 3)
    }
}
