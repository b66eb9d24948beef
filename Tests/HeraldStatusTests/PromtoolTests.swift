import Foundation
import Herald
import HeraldLoaders
import HeraldSubscribers
import HeraldTestSupport
import Testing

@testable import HeraldStatus
import HeraldTesting

/// The real validator on real output: `promtool check metrics` (Debian's `prometheus` package,
/// which .ci/run installs). A missing promtool fails the test; `HERALD_SKIP_PROMTOOL=1` skips it
/// on a machine without one.
@Suite(.timeLimit(.minutes(5))) struct PromtoolTests {
    static let promtool = Tool.find(["/usr/bin/promtool", "/usr/local/bin/promtool"])
    static let skipped = ProcessInfo.processInfo.environment["HERALD_SKIP_PROMTOOL"] == "1"

    @Test(.disabled(if: skipped, "HERALD_SKIP_PROMTOOL=1"))
    func promtoolAcceptsTheMetricsWithEveryFamilyAndEscapedLabels() async throws {
        let promtool = try #require(Self.promtool, "promtool is not installed (apt-get install prometheus), or set HERALD_SKIP_PROMTOOL=1")
        let bus = EventBus()
        let sources = StatusSources(bus: bus)
        let monitor = ScheduleMonitor()
        sources.add(StatusSources.Loader(id: "home", kind: "timeline", monitor: monitor))
        let clock = ManualClock()
        let schedule = LoaderSchedule(policy: SchedulePolicy(interval: .seconds(3600)), clock: clock, monitor: monitor) {
            .failed(LoadError(kind: "httpStatus", message: "503"))
        }
        let scheduling = Task { await schedule.run() }
        let queued = try bus.subscribe(matching: "test.>", name: #"a "queued" \ subscriber"#, delivery: .queued(capacity: 8)) { _ in }
        defer { queued.cancel() }
        // A topic token may hold quotes and backslashes: its label value must be escaped.
        try bus.post(Ping(topic: #"test.q"uote\back"#, n: 1))
        try bus.post(Ping(topic: "test.plain", n: 2))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-promtool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sink = FileSink(name: "archive", path: directory.appendingPathComponent("events.jsonl").path, durability: .none)
        let archiving = await RunningGroup("archive", sink.service(on: bus))
        sources.add(archive: sink)
        let running = try await RunningEndpoint.start(sources)
        await clock.waitForSleepers(1)  // the load is recorded
        #expect(monitor.snapshot.failures == ["httpStatus": 1])

        let scrape = try await running.get("/metrics")
        #expect(scrape.headers.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(scrape.body.contains(#"herald_events_published_total{topic="test.q\"uote\\back"} 1"#))
        for family in ["herald_events_published_total", "herald_subscription_delivered_total", "herald_subscription_dropped_total",
                       "herald_subscription_failed_total", "herald_subscription_queue_depth", "herald_subscription_queue_high_water_mark",
                       "herald_loader_pulls_total", "herald_loader_failures_total", "herald_loader_new_items_total",
                       "herald_loader_last_success_timestamp_seconds", "herald_loader_next_run_timestamp_seconds",
                       "herald_post_intents_pending", "herald_posts_sent_total", "herald_posts_failed_total",
                       "herald_archive_written_bytes_total", "herald_archive_rotations_total",
                       "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds"] {
            #expect(scrape.body.contains("# TYPE \(family) "), "no \(family)")
            #expect(scrape.body.contains("# HELP \(family) "), "no help for \(family)")
        }
        let checked = try await Tool.run(promtool, ["check", "metrics"], input: Data(scrape.body.utf8))
        #expect(checked.status == 0, "promtool: \(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.isEmpty && checked.stderr.isEmpty, "promtool found problems: \(checked.stdout)\(checked.stderr)")

        scheduling.cancel()
        await scheduling.value
        await archiving.stop()
        try await running.stop()
    }
}
