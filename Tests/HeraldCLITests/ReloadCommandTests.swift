import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `herald run` reloads its config.json on SIGHUP and `herald reload`: the daemon and the
/// command as real processes, real signals, the status endpoint over loopback.
@Suite struct ReloadCommandTests {
    static let tiqav = #""images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}"#
    static let todos = #""todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}"#

    @Test(.timeLimit(.minutes(5)))
    func sighupAddsALoaderAndTheRunningOnesGoOn() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.tiqav)
        let (child, _) = try await rig.start()
        #expect(await child.waitForStandardError { $0.contains("loader.images.finished") })

        try rig.write(loaders: Self.tiqav + ", " + Self.todos)
        child.signal(SIGHUP)
        #expect(await child.waitForStandardError { $0.contains("herald: reloaded") }, "\(child.stderr)")
        #expect(child.stderr.contains("loaders.todos: added"))
        #expect(!child.stderr.contains("loaders.images: changed"), "an untouched loader is left alone")
        // The new loader runs (its first load comes at once) and its event is archived.
        #expect(await child.waitForStandardError { $0.contains("loader.todos.finished") }, "\(child.stderr)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        // The archive, closed now, has the reload's event.
        #expect(rig.archive.contains("\"topic\":\"herald.config.reloaded\""))
    }

    @Test(.timeLimit(.minutes(5)))
    func anInvalidFileChangesNothingAndHeraldReloadExitsTwoNamingEveryProblem() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.tiqav)
        let (child, url) = try await rig.start()

        // Half-written, as an editor's save caught midway.
        let whole = try String(contentsOf: rig.config, encoding: .utf8)
        try rig.writeRaw(String(whole.prefix(whole.count / 2)))
        let torn = try await rig.reload(url)
        #expect(torn.status == 2, "\(torn.stdout)\(torn.stderr)")
        #expect(torn.stderr.contains("reload refused, nothing changed"), "\(torn.stderr)")
        #expect(torn.stderr.contains("not valid JSON"), "\(torn.stderr)")

        // Two problems, each with its JSON path.
        try rig.write(loaders: #""images": {"kind": "tiqav", "service": "tiqav", "every": "30x"}, "bad": {"kind": "todo", "service": "nowhere", "bucket": "x", "every": "1h"}"#)
        let invalid = try await rig.reload(url)
        #expect(invalid.status == 2)
        #expect(invalid.stderr.contains("loaders.images.every"), "\(invalid.stderr)")
        #expect(invalid.stderr.contains("loaders.bad.service"), "\(invalid.stderr)")
        let metrics = try await Curl.run([url + "metrics"]).stdout
        #expect(metrics.contains("herald_config_last_reload_successful 0"), "\(metrics)")
        #expect(child.stderr.contains("refused, nothing changed"))
        let herald = try #require(BuiltProducts.url(of: "herald"))
        let table = try #require(try await ChildProcess.run(herald, ["status", "--url", url]))
        #expect(table.stdout.contains("config \(rig.config.path) sha1 "), "\(table.stdout)")
        #expect(table.stdout.contains("2 reloads; the last failed: loaders."), "\(table.stdout)")

        // The next reload of a valid file works; what a restart needs is said.
        try rig.write(loaders: Self.tiqav + ", " + Self.todos)
        var text = try String(contentsOf: rig.config, encoding: .utf8)
        text = text.replacingOccurrences(of: #""listen": "127.0.0.1:0""#, with: #""listen": "127.0.0.1:1""#)
        try rig.writeRaw(text)
        let applied = try await rig.reload(url)
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(applied.stdout.contains("loaders.todos: added"), "\(applied.stdout)")
        #expect(applied.stdout.contains("http: changed, but applies only at the next start"), "\(applied.stdout)")
        let after = try await Curl.run([url + "metrics"]).stdout
        #expect(after.contains("herald_config_last_reload_successful 1"))
        #expect(after.contains("herald_config_reloads_total 3"))
        let status = try await Curl.run([url + "status"]).stdout
        #expect(status.contains("\"sha1\":\""), "\(status)")
        #expect(status.contains("\"loadedAt\":\""))

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(rig.archive.contains("\"topic\":\"herald.config.reload.failed\""))
    }

    @Test(.timeLimit(.minutes(5)))
    func aChangedIntervalKeepsTheLoadersStateAndANewRequestSetsItAside() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.tiqav)
        let (child, url) = try await rig.start()
        #expect(await child.waitForStandardError { $0.contains("images: 5 images, 5 new") })
        let state = rig.directory.appendingPathComponent("var/state/images.json")

        try rig.write(loaders: #""images": {"kind": "tiqav", "service": "tiqav", "every": "2h"}"#)
        let kept = try await rig.reload(url)
        #expect(kept.stdout.contains("loaders.images: changed (state kept)"), "\(kept.stdout)")

        try rig.write(loaders: #""images": {"kind": "tiqav", "service": "tiqav", "query": "cat", "every": "2h"}"#)
        let renewed = try await rig.reload(url)
        #expect(renewed.stdout.contains("loaders.images: changed (new identity: its state starts again)"), "\(renewed.stdout)")
        #expect(FileManager.default.fileExists(atPath: state.path + ".replaced"))

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(.timeLimit(.minutes(5)))
    func aStormOfHangupsCoalescesAndTheDaemonStaysUp() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.tiqav)
        let (child, url) = try await rig.start()
        try rig.write(loaders: Self.tiqav + ", " + Self.todos)
        for _ in 0..<50 { child.signal(SIGHUP) }
        // A reload asked for after the storm runs after every reload the storm started.
        let last = try await rig.reload(url)
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        let metrics = try await Curl.run([url + "metrics"]).stdout
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("herald_config_reloads_total ") })
        let count = try #require(Double(line.split(separator: " ")[1]))
        // Fewer reloads than requests (how many depends on when the signals arrive; the
        // coalescing itself is pinned by ReloadQueueTests), and the file applied once.
        #expect(count >= 2 && count < 51, "\(line)")
        let applied = child.stderr.split(separator: "\n").filter { $0.hasPrefix("herald: reloaded") && $0.contains("loaders.todos: added") }
        #expect(applied.count == 1, "\(child.stderr)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
    }
}
