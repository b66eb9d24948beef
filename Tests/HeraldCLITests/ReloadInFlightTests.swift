import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A reload that removes a loader whose load is in flight, and one that finds log files and
/// archives moved away by logrotate: `herald run` as a real process.
@Suite struct ReloadInFlightTests {
    @Test(.timeLimit(.minutes(5)))
    func removingALoaderWhoseLoadIsInFlightCancelsTheLoadAndTheReloadCompletes() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        // The service never answers: the test knows the load is in flight when its request came.
        let server = try HoldingServer()
        let services = #""tiqav": {"url": "http://127.0.0.1:\#(server.port)", "timeout": "1h"}"#
        try rig.write(services: services, loaders: #""images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}"#)
        let (child, url) = try await rig.start()
        await server.arrived.wait()

        try rig.write(services: services, loaders: "")
        let reload = try await rig.reload(url)
        #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        #expect(reload.stdout.contains("loaders.images: removed"), "\(reload.stdout)")
        // The load was cancelled: herald closed its connection.
        await server.closed.wait()
        let status = try await Curl.run([url + "status"]).stdout
        #expect(!status.contains("\"id\":\"images\""), "\(status)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!rig.archive.contains("loader.images.finished"))
    }

    @Test(.timeLimit(.minutes(5)))
    func hangupReopensTheLogFileAndTheArchiveLogrotateMoved() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        let logFile = #", "file-log": {"kind": "log", "topics": ["loader.>", "herald.>"], "output": "var/herald.log"}"#
        let images = #""images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}"#
        try rig.write(loaders: images, extraSubscribers: logFile)
        let (child, _) = try await rig.start()
        #expect(await child.waitForStandardError { $0.contains("loader.images.finished") })
        let var_ = rig.directory.appendingPathComponent("var")
        // logrotate's default: rename, then postrotate sends SIGHUP.
        try FileManager.default.moveItem(at: var_.appendingPathComponent("events.jsonl"), to: var_.appendingPathComponent("events.jsonl.1"))
        try FileManager.default.moveItem(at: var_.appendingPathComponent("herald.log"), to: var_.appendingPathComponent("herald.log.1"))
        // A change too, so the reload publishes an event that lands in the new files.
        try rig.write(loaders: images + #", "todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}"#,
                      extraSubscribers: logFile)
        child.signal(SIGHUP)
        #expect(await child.waitForStandardError { $0.contains("loader.todos.finished") }, "\(child.stderr)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        let newArchive = try String(contentsOf: var_.appendingPathComponent("events.jsonl"), encoding: .utf8)
        let oldArchive = try String(contentsOf: var_.appendingPathComponent("events.jsonl.1"), encoding: .utf8)
        #expect(newArchive.contains("loader.todos.finished"), "\(newArchive)")
        #expect(oldArchive.contains("loader.images.finished"))
        #expect(!oldArchive.contains("loader.todos.finished"), "written to the moved file: \(oldArchive)")
        let newLog = try String(contentsOf: var_.appendingPathComponent("herald.log"), encoding: .utf8)
        let oldLog = try String(contentsOf: var_.appendingPathComponent("herald.log.1"), encoding: .utf8)
        #expect(newLog.contains("todos: 0 todos"), "\(newLog)")
        #expect(!oldLog.contains("todos: 0 todos"), "\(oldLog)")
    }
}

/// A reload that removes a post rule whose post is pending says why it is not sent, and the
/// outbox keeps it.
@Suite struct ReloadPendingPostTests {
    @Test(.timeLimit(.minutes(5)))
    func removingARuleWithAPendingPostSaysItStaysInTheOutbox() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        let server = try HoldingServer()  // the BaaS that never answers: the post stays in flight
        let services = #""tiqav": {"url": "sandbox"}, "hold": {"kind": "baas", "url": "http://127.0.0.1:\#(server.port)", "tenant": "demo", "appId": "x", "appKey": "k", "timeout": "1h"}"#
        let loaders = #""images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}"#
        let held = #""held": {"on": "loader.images.finished", "for": "event", "service": "hold", "bucket": "things", "fields": {"loader": "{{loader}}"}}"#
        let other = #""other": {"on": "loader.images.failed", "for": "event", "service": "hold", "bucket": "things", "fields": {"loader": "{{loader}}"}}"#
        try rig.write(services: services, loaders: loaders, extraSubscribers: #", "posts": {"kind": "post", "rules": {\#(held), \#(other)}}"#)
        let (child, url) = try await rig.start()
        await server.arrived.wait()

        try rig.write(services: services, loaders: loaders, extraSubscribers: #", "posts": {"kind": "post", "rules": {\#(other)}}"#)
        let reload = try await rig.reload(url)
        #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        #expect(reload.stdout.contains("subscribers.posts: changed"), "\(reload.stdout)")
        #expect(reload.stdout.contains("note: subscribers.posts: 1 pending post(s) of removed rule(s) held stay in the outbox, unsent"),
                "\(reload.stdout)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        let outbox = try String(contentsOf: rig.directory.appendingPathComponent("var/state/outbox/posts.jsonl"), encoding: .utf8)
        #expect(outbox.contains("\"op\":\"intent\"") && outbox.contains("held:event:"), "\(outbox)")
        #expect(!outbox.contains("\"op\":\"done\""), "\(outbox)")
    }
}
