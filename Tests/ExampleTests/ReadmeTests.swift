import Foundation
import Herald
import Testing

/// The README's tour, verbatim, so it keeps compiling, running and meaning what it says.
@Suite struct ReadmeTests {
    struct LoadFinished: Event {
        static let topic: Topic = "loader.home.finished"
        var topic: Topic { Self.topic }
        var count: Int
    }

    /// The tour, from `let bus = EventBus()` to the shutdown, pasted from the README.
    func tour() async throws -> (BusStatistics, ShutdownReport) {
        let bus = EventBus()

        // By type, inline: runs on the publisher before `post` returns (NotificationCenter's
        // `queue: nil`); `from:` filters by sender, as `object:` does.
        let home = try bus.subscribe(to: LoadFinished.self, from: "loader.home") { event in
            print("home: \(event.count) statuses")
        }

        // By pattern, queued: its own bounded mailbox drained by its own task. Envelopes carry the
        // topic, sender, bus-wide sequence number, timestamp and correlation id.
        let log = try bus.subscribe(matching: "loader.>", delivery: .queued(capacity: 100, overflow: .dropOldest)) { envelope in
            print("\(envelope.topic) #\(envelope.sequence) from \(envelope.sender?.id ?? "-")")
        }

        // As an AsyncSequence, reading the same kind of mailbox.
        let stream = try bus.events(of: LoadFinished.self)

        try bus.post(LoadFinished(count: 20), from: "loader.home")                // synchronous, never blocks
        try await bus.publish(LoadFinished(count: 21), from: "loader.home")       // waits while a `.wait` mailbox is full

        for await event in stream where event.count == 21 { break }
        let stats = bus.stats()                     // per topic and per subscription counts
        let report = await bus.shutdown(timeout: .seconds(300)) // refuses new publishes, drains every mailbox
        withExtendedLifetime((home, log)) {}
        return (stats, report)
    }

    @Test func theTourRunsAndDoesWhatItSays() async throws {
        let (stats, report) = try await tour()
        #expect(stats.published == 2)
        #expect(stats.topics[LoadFinished.topic]?.published == 2)
        #expect(stats.subscriptions.first?.delivered == 2, "the inline subscriber saw both events")
        #expect(report.drained)
    }

    @Test func theREADMEShowsExactlyThisCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```swift\n").dropFirst().first?
            .components(separatedBy: "```").first)
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let testLines = Set(lines(test))
        let missing = lines(block).filter { !testLines.contains($0) }
        #expect(missing == [], "README lines not in the compiled tour")
        #expect(readme.contains("swift run herald"))
        #expect(readme.contains("swift test"))
    }
}
