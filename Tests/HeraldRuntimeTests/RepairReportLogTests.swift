import Foundation
import Herald
import HeraldRuntime
import HeraldSubscribers
import HeraldTestSupport
import Testing

/// The repairs the file sink and the post scheduler make at start (torn archive lines, torn
/// outbox records) reach the shipped log, saying what was moved, from where, to where.
@Suite struct RepairReportLogTests {
    static let shippedConfig = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config.json")

    @Test(arguments: ["sink.archive.torn", "sink.posts.outbox.torn"])
    func theShippedLogSubscribesToRepairReports(topic: String) throws {
        let configuration = try ConfigLoader(environment: [:]).load(contentsOf: Self.shippedConfig)
        let logs = configuration.subscribers.values.compactMap(\.logSettings)
        #expect(!logs.isEmpty)
        let parsed = try Topic(validating: topic)
        #expect(logs.contains { log in log.topics.contains { TopicPattern(stringLiteral: $0).matches(parsed) } },
                "\(logs.map(\.topics))")
    }

    @Test func aTornLineIsLoggedAsAWarningNamingTheFiles() async throws {
        let bus = EventBus(configuration: .init(clock: { Date(timeIntervalSince1970: 1_800_000_000) }))
        let writer = InMemoryLogWriter()
        let subscriber = LogSubscriber(patterns: ["sink.>"], level: .info, writer: writer)
        let running = await RunningGroup("log", subscriber.service(on: bus))
        try bus.post(FileSinkTornLine(sink: "archive", path: "/var/events.jsonl", byteCount: 17,
                                      movedTo: "/var/events.jsonl.torn", keptBytes: 4096), from: "sink.archive")
        try bus.post(FileSinkTornLine(sink: "posts.outbox", path: "/var/outbox.jsonl", byteCount: 5,
                                      movedTo: "/var/outbox.jsonl.torn", keptBytes: 0), from: "posts")
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()
        #expect(writer.lines == [
            "2027-01-15T08:00:00.000Z WARNING sink.archive.torn  archive: torn last line of /var/events.jsonl (17 bytes) moved to /var/events.jsonl.torn; 4096 bytes kept",
            "2027-01-15T08:00:00.000Z WARNING sink.posts.outbox.torn  posts.outbox: torn last line of /var/outbox.jsonl (5 bytes) moved to /var/outbox.jsonl.torn; 0 bytes kept",
        ])
    }
}
