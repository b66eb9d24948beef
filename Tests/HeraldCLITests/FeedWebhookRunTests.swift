import Foundation
import HeraldTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The feed loader and the webhook target through the daemon, as processes: `herald run`
/// reads a `herald sandbox` process's Atom feed and delivers each new item to the sandbox's
/// webhook receiver, which verifies the signatures; `standardwebhooks` (PyPI) verifies them
/// again; a restart announces nothing twice; a run killed mid-delivery delivers each item
/// under one `webhook-id` after the restart.
@Suite(.timeLimit(.minutes(5))) struct FeedWebhookRunTests {
    static let secret = "whsec_aGVyYWxkLXNhbmRib3gtd2ViaG9vay1zZWNyZXQhISE="

    /// A `herald sandbox` whose feeds stand still (five items) and whose receiver knows the secret.
    static let sandboxConfig = """
        {"services": {"hook": {"kind": "webhook", "url": "sandbox", "secret": "\(secret)"}},
         "loaders": {"news": {"kind": "feed", "url": "sandbox:/feeds/news.atom", "every": "1h"}},
         "sandbox": {"port": 0, "statusInterval": "1h"}}
        """

    /// A daemon config: the sandbox process's Atom feed, each new item delivered as JSON.
    static func daemonConfig(in directory: URL, sandbox: URL) throws -> URL {
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {"state": "var/state",
             "services": {"hook": {"kind": "webhook", "url": "\(sandbox.absoluteString)/_sandbox/webhooks", "secret": "\(secret)",
                                   "headers": {"X-Herald-Test": "yes"}}},
             "loaders": {"news": {"kind": "feed", "url": "\(sandbox.absoluteString)/feeds/news.atom", "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"echo": {"on": "loader.news.finished", "for": "new", "service": "hook",
                                            "body": {"title": "{{item.title}}", "link": "{{item.link}}", "author": "{{item.author}}",
                                                     "categories": "{{item.categories}}", "feed": "{{event.title}}"}}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    struct Delivery: Decodable {
        struct Header: Decodable {
            var name: String
            var value: String
        }

        var id: String?
        var timestamp: String?
        var signature: String?
        var headers: [Header]
        var body: String
        var accepted: Bool
        var verified: Bool
        var duplicate: Bool
    }

    static func deliveries(_ sandbox: URL) async throws -> [Delivery] {
        struct Body: Decodable { var deliveries: [Delivery] }
        let (data, _) = try await URLSession.shared.data(from: sandbox.appendingPathComponent("_sandbox/webhooks"))
        return try JSONDecoder().decode(Body.self, from: data).deliveries
    }

    static let verifier = #"""
import json, sys, urllib.request
from standardwebhooks.webhooks import Webhook

base, secret = sys.argv[1], sys.argv[2]
deliveries = json.load(urllib.request.urlopen(base + "/_sandbox/webhooks"))["deliveries"]
wh = Webhook(secret)
print(json.dumps([wh.verify(d["body"].encode("utf-8"), {"webhook-id": d["id"], "webhook-timestamp": d["timestamp"],
                                                         "webhook-signature": d["signature"]}) for d in deliveries]))
"""#

    @Test func theDaemonDeliversEachNewFeedItemSignedAndARestartAnnouncesNothingTwice() async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald, config: Self.sandboxConfig)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        let first = try ChildProcess(herald, ["run", "--config", config.path])
        let delivered = await first.waitForStandardError { text in
            PostReliabilityTests.outcomes(text).sent + PostReliabilityTests.outcomes(text).failed >= 5
        }
        #expect(delivered, "stderr: \(first.stderr)")
        first.signal(SIGTERM)
        let stopped = try #require(await first.finish())
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("news: 5 items, 5 new"), "\(stopped.stderr)")
        #expect(PostReliabilityTests.outcomes(stopped.stderr) == (5, 0, 0))
        #expect(!stopped.stderr.contains(Self.secret))

        let deliveries = try await Self.deliveries(sandbox.url)
        #expect(deliveries.count == 5 && deliveries.allSatisfy { $0.accepted && $0.verified && !$0.duplicate })
        // The service's extra header arrives with each delivery; the secret is in no header (the
        // signature is an HMAC made with it, not the secret).
        let secretKey = String(Self.secret.dropFirst("whsec_".count))
        for delivery in deliveries {
            #expect(delivery.headers.filter { $0.name.lowercased() == "x-herald-test" }.map(\.value) == ["yes"], "\(delivery.headers)")
            #expect(delivery.headers.contains { $0.name.lowercased() == "webhook-signature" })
            #expect(!delivery.headers.contains { $0.value.contains(Self.secret) || $0.value.contains(secretKey) }, "\(delivery.headers)")
        }
        let bodies = try deliveries.map { try #require(try JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any]) }
        #expect(bodies.allSatisfy { ($0["link"] as? String)?.hasPrefix(sandbox.url.absoluteString + "/news/") == true })
        #expect(bodies.allSatisfy { $0["feed"] as? String == "Herald sandbox news (Atom)" && ($0["categories"] as? [String]) == ["sandbox"] })
        #expect(bodies.contains { ($0["title"] as? String)?.contains("Fish & chips <3") == true })

        if !PythonClients.skipped {
            let verified = try await PythonClients.run(Self.verifier, [sandbox.url.absoluteString, Self.secret])
            #expect(verified.status == 0, "standardwebhooks refused Herald's signature: \(verified.stderr)")
        }

        // A restart reads the same feed: it was answered 304 or holds only seen items.
        let second = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await second.waitForStandardError { $0.contains("loader.news.finished") })
        second.signal(SIGTERM)
        let again = try #require(await second.finish())
        #expect(again.status == 0)
        #expect(again.stderr.contains("news: feed not modified") || again.stderr.contains("news: 5 items, 0 new"), "\(again.stderr)")
        #expect(try await Self.deliveries(sandbox.url).count == 5)
        await sandbox.stop()
    }

    @Test func aGoneEndpointFailsThePostSayingSo() async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald, config: Self.sandboxConfig)
        var request = URLRequest(url: sandbox.url.appendingPathComponent("_sandbox/faults"))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"path": "/_sandbox/webhooks", "method": "POST", "responses": [410, 503, 410, 410, 410, 410]}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        let run = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await run.waitForStandardError { PostReliabilityTests.outcomes($0).sent + PostReliabilityTests.outcomes($0).failed >= 5 })
        run.signal(SIGTERM)
        let stopped = try #require(await run.finish())
        #expect(stopped.status == 0)
        let outcome = PostReliabilityTests.outcomes(stopped.stderr)
        // Five items meet 410, 503 (retried), then 410 four times: five failures, none sent.
        #expect(outcome == (0, 0, 5), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("the endpoint is gone (410 Gone)"))
        #expect(try await Self.deliveries(sandbox.url).isEmpty)
        await sandbox.stop()
    }

    @Test(arguments: ["after-intent", "after-post"])
    func aRunKilledMidDeliveryDeliversEachItemUnderOneWebhookID(crashPoint: String) async throws {
        let herald = try #require(PostReliabilityTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald, config: Self.sandboxConfig)
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        let crashRun = try #require(PostReliabilityTests.crashRun)
        let crashed = try ChildProcess(crashRun, [crashPoint, "--config", config.path])
        let killed = try #require(await crashed.finish(within: .seconds(120)))
        #expect([SIGKILL, 128 + SIGKILL].contains(killed.status), "stderr: \(killed.stderr)")
        let afterCrash = try await Self.deliveries(sandbox.url)
        #expect(afterCrash.count == (crashPoint == "after-post" ? 1 : 0))

        let restarted = try ChildProcess(herald, ["run", "--config", config.path])
        #expect(await restarted.waitForStandardError { PostReliabilityTests.outcomes($0).sent + PostReliabilityTests.outcomes($0).failed >= 5 },
                "stderr: \(restarted.stderr)")
        restarted.signal(SIGTERM)
        let stopped = try #require(await restarted.finish())
        #expect(stopped.status == 0)
        #expect(PostReliabilityTests.outcomes(stopped.stderr).failed == 0)

        // Every item arrived; one sent before the kill may arrive again, under the same
        // webhook-id, which the receiver recognises as a repeat.
        let deliveries = try await Self.deliveries(sandbox.url)
        let firsts = deliveries.filter { !$0.duplicate }
        #expect(firsts.count == 5 && Set(firsts.compactMap(\.id)).count == 5, "\(deliveries.map(\.id))")
        #expect(deliveries.count - firsts.count <= 1)
        #expect(deliveries.allSatisfy { $0.accepted && $0.verified })
        await sandbox.stop()
    }
}
