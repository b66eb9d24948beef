import Foundation
import Herald
import HeraldLoaders
import HeraldSubscribers
import HeraldTestSupport
import Testing

@testable import HeraldStatus
import HeraldTesting

/// The status page in a real browser: headless Chromium loads it from a running endpoint, and
/// the rendered DOM shows the loaders and the outbox, and its chart and event list change when
/// events come. A missing Chromium fails the test; `HERALD_SKIP_CHROMIUM=1` skips it.
@Suite(.timeLimit(.minutes(5))) struct StatusPageTests {
    static let skipped = ProcessInfo.processInfo.environment["HERALD_SKIP_CHROMIUM"] == "1"

    /// Where the screenshot is kept: `HERALD_TEST_OUTPUT`, or `.build/test-output` in the package.
    static var outputDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["HERALD_TEST_OUTPUT"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-output")
    }

    @Test func thePageIsOneSelfContainedDocument() {
        let html = String(decoding: StatusPage.html, as: UTF8.self)
        #expect(html.hasPrefix("<!doctype html>"))
        // The SVG namespace is a name, not a fetch; nothing else points outside.
        let outside = html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
        for reference in ["http://", "https://", "//cdn", "<link", "@import", "src=", "url("] {
            #expect(!outside.contains(reference), "the page refers outside: \(reference)")
        }
        #expect(html.contains("new EventSource(\"/events\")"))
    }

    @Test(.disabled(if: skipped, "HERALD_SKIP_CHROMIUM=1"))
    func chromiumRendersTheLoadersTheOutboxAndLiveEvents() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-page-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = EventBus()
        let sources = StatusSources(bus: bus)
        let clock = ManualClock()
        let monitor = ScheduleMonitor()
        sources.add(StatusSources.Loader(id: "home", kind: "timeline", monitor: monitor))
        let schedule = LoaderSchedule(policy: SchedulePolicy(interval: .seconds(30)), clock: clock, monitor: monitor) {
            .finished(items: 20, new: 20)
        }
        let scheduling = Task { await schedule.run() }
        let posts = ScriptedPosts()
        let scheduler = try await posts.scheduler(template: "{{word}}", outbox: directory, bus: bus, sources: sources)
        // The file the daemon runs: the page's config line shows its path, hash and load time.
        let loadedAt = Date(timeIntervalSince1970: 1_796_000_000)
        sources.updateConfig { config in
            config.path = "/etc/herald/config.json"
            config.sha1 = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
            config.loadedAt = loadedAt
            config.reloads = 2
            config.lastReloadSuccessful = false
            config.lastErrors = ["loaders.images.every: \"30x\" is not a duration"]
        }
        sources.markReady()
        let running = try await RunningEndpoint.start(sources)
        await clock.waitForSleepers(1)
        try bus.post(Word(topic: "test.post", n: 1, word: "hold"))
        await posts.waitUntilHolding()

        let chromium = try await Chromium.launch()
        _ = try await chromium.call("Page.enable")
        _ = try await chromium.call("Page.navigate", ["url": running.url.absoluteString])
        try await chromium.waitUntil("document.querySelector('#loaders tr[data-loader=\"home\"]')")
        let row = try #require(try await chromium.evaluate("document.querySelector('#loaders tr[data-loader=\"home\"]').innerText") as? String)
        #expect(row.contains("timeline"))
        #expect(row.contains("waiting"))
        #expect(row.contains("finished: 20 items, 20 new"))
        try await chromium.waitUntil("document.getElementById('config').innerText.length > 0")
        let config = try #require(try await chromium.evaluate("document.getElementById('config').innerText") as? String)
        // The time as this browser's locale writes it, of the instant given.
        let loaded = try #require(try await chromium.evaluate("new Date(\"2026-11-30T00:53:20Z\").toLocaleTimeString()") as? String)
        #expect(ISO8601DateFormatter().string(from: loadedAt) == "2026-11-30T00:53:20Z")
        #expect(config.hasPrefix("config /etc/herald/config.json · sha1 1a2b3c4d5e6f · loaded \(loaded) · 2 reloads"), "\(config)")
        #expect(!config.contains("1a2b3c4d5e6f7"), "the hash is shortened to 12 digits: \(config)")
        #expect(config.contains("last reload failed: loaders.images.every: \"30x\" is not a duration"), "\(config)")
        try await chromium.waitUntil("document.querySelector('#outbox tr[data-key]')")
        let outbox = try #require(try await chromium.evaluate("document.querySelector('#outbox').innerText") as? String)
        #expect(outbox.contains("echo:event:"))
        // Subscribed: the page's stream counts as a client.
        await running.endpoint.httpServer?.waitUntil { $0.connections.contains(.streaming) }
        let before = try #require(try await chromium.evaluate(
            "[document.getElementById('chart').dataset.total, document.querySelectorAll('#events li').length]") as? [Any])
        #expect(before.first as? String == "0")
        #expect(before.last as? Int == 0)

        for n in 1...5 { try bus.post(Ping(topic: "test.page", n: n), from: "tests") }
        try await chromium.waitUntil("document.querySelectorAll('#events li[data-topic=\"test.page\"]').length === 5")
        try await chromium.waitUntil("Number(document.getElementById('chart').dataset.total) >= 5")
        let line = try await chromium.evaluate("document.querySelector('#chart polyline[data-topic=\"test.page\"]') !== null") as? Bool
        #expect(line == true)
        let newest = try await chromium.evaluate("document.querySelector('#events li').innerText") as? String
        #expect(newest?.contains("test.page") == true)
        #expect(newest?.contains("tests") == true)

        let shot = try await chromium.call("Page.captureScreenshot", ["format": "png"])
        let image = try #require((try JSONSerialization.jsonObject(with: shot) as? [String: Any])?["data"] as? String)
        try FileManager.default.createDirectory(at: Self.outputDirectory, withIntermediateDirectories: true)
        let file = Self.outputDirectory.appendingPathComponent("status-page.png")
        try #require(Data(base64Encoded: image)).write(to: file)
        #expect(try Data(contentsOf: file).starts(with: [0x89, 0x50, 0x4E, 0x47]))

        await chromium.quit()
        posts.release()
        scheduling.cancel()
        await scheduling.value
        await scheduler.stop()
        try await running.stop()
    }
}
