import Foundation
import HeraldRuntime
import HeraldTestSupport
import Testing

/// A feed loader and a webhook service on an https server signed by a private CA, through the
/// daemon: trusted with `caFile`, refused without it (the system's CA store does not know the CA).
@Suite(.serialized, .timeLimit(.minutes(5))) struct ServiceTLSRunTests {
    /// A config with a feed loader reading the server's `/feed.rss` and a rule delivering each new
    /// item to its `/hook`; `caFile` on the feed and the webhook service as asked.
    static func configuration(server: TLSTestServer, caFile: String, state: URL, feedCA: Bool, hookCA: Bool) throws -> HeraldConfiguration {
        var hook: [String: Any] = ["kind": "webhook", "url": server.url("/hook").absoluteString, "timeout": "60s"]
        if hookCA { hook["caFile"] = caFile }
        var feed: [String: Any] = ["kind": "feed", "url": server.url("/feed.rss").absoluteString, "every": "1h", "timeout": "60s"]
        if feedCA { feed["caFile"] = caFile }
        let object: [String: Any] = [
            "state": state.path,
            "services": ["hook": hook],
            "loaders": ["private": feed],
            "subscribers": [
                "console": ["kind": "log", "topics": ["loader.>", "post.>"], "level": "info"],
                "posts": ["kind": "post", "retry": ["initial": "50ms", "max": "100ms", "attempts": 2], "rules": [
                    "notify": ["on": "loader.private.finished", "for": "new", "service": "hook", "body": ["title": "{{item.title}}"]],
                ]],
            ],
        ]
        return try ConfigLoader(environment: [:]).parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: state)
    }

    /// Runs the daemon on `configuration` until `done` holds on its log lines; the lines.
    static func run(_ configuration: HeraldConfiguration, until done: @escaping @Sendable ([String]) -> Bool) async throws -> [String] {
        let writer = WatchedWriter()
        let daemon = DaemonTests.daemon(configuration, writer: writer)
        let run = Task { try await daemon.run() }
        await writer.wait(until: done)
        run.cancel()
        _ = try await run.value
        return writer.lines
    }

    /// Whether both items' posts ended (sent or failed), or the load failed (then no post comes).
    @Sendable static func postsEndedOrLoadFailed(_ lines: [String]) -> Bool {
        lines.contains { $0.contains("loader.private.failed") }
            || lines.filter { $0.contains("post.notify.sent") || $0.contains("post.notify.failed") }.count >= 2
    }

    static func withServer(_ body: (TLSTestServer, TestCertificates, URL) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tls-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        let server = try TLSTestServer(certificate: certificates.serverCertificate, key: certificates.serverKey)
        do {
            try await body(server, certificates, state)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func aFeedAndAWebhookOnAPrivateCAWorkWithTheirCAFile() async throws {
        try await Self.withServer { server, certificates, state in
            let configuration = try Self.configuration(server: server, caFile: certificates.caFile, state: state, feedCA: true, hookCA: true)
            let lines = try await Self.run(configuration, until: Self.postsEndedOrLoadFailed)
            #expect(lines.contains { $0.contains("loader.private.finished") && $0.hasSuffix("private: 2 items, 2 new") }, "\(lines)")
            #expect(lines.filter { $0.contains("post.notify.sent") }.count == 2, "\(lines)")
            #expect(!lines.contains { $0.contains("certificate verify failed") }, "\(lines)")
        }
    }

    @Test func aFeedOnAPrivateCAIsRefusedWithoutItsCAFile() async throws {
        try await Self.withServer { server, certificates, state in
            let configuration = try Self.configuration(server: server, caFile: certificates.caFile, state: state, feedCA: false, hookCA: true)
            let lines = try await Self.run(configuration) { lines in
                lines.contains { $0.contains("loader.private.failed") || $0.contains("loader.private.finished") }
            }
            // The failure says why (it said only "transport failed"); the first test shows the
            // same server and CA work once the caFile is set.
            let failed = lines.first { $0.contains("loader.private.failed") } ?? ""
            #expect(failed.contains("private: load failed: transport"), "\(lines)")
            #expect(failed.contains("certificate verify failed"), "\(failed)")
            #expect(!lines.contains { $0.contains("post.notify") })
        }
    }

    @Test func aWebhookOnAPrivateCAIsRefusedWithoutItsCAFile() async throws {
        try await Self.withServer { server, certificates, state in
            let configuration = try Self.configuration(server: server, caFile: certificates.caFile, state: state, feedCA: true, hookCA: false)
            let lines = try await Self.run(configuration, until: Self.postsEndedOrLoadFailed)
            #expect(lines.contains { $0.contains("loader.private.finished") }, "\(lines)")
            #expect(!lines.contains { $0.contains("post.notify.sent") }, "\(lines)")
            let failures = lines.filter { $0.contains("post.notify.failed") }
            #expect(failures.count == 2, "\(lines)")
            #expect(failures.allSatisfy { $0.contains("certificate verify failed") }, "\(failures)")
        }
    }
}
