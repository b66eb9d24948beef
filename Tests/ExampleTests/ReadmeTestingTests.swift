import Foundation
import Herald
import HeraldTesting
import Testing

/// The README's "Testing code that uses the bus", verbatim, so it keeps compiling and meaning
/// what it says.
@Suite struct ReadmeTestingTests {
    typealias LoadFinished = ReadmeTests.LoadFinished

    @Test func theTestingExampleRuns() async throws {
        let bus = EventBus()

        let recorder = try EventRecorder(bus: bus, matching: "loader.>")
        try bus.post(LoadFinished(count: 20), from: "loader.home")
        let finished = await recorder.first(LoadFinished.self)          // nil after a five-minute guard
        #expect(recorder.topics == ["loader.home.finished"])

        let clock = ManualClock()
        let retry = Task { try await clock.sleep(for: .seconds(30)) }
        await clock.waitForSleepers()                                   // the code under test is asleep
        clock.advance(by: .seconds(30))                                 // and wakes now, not in 30 s

        #expect(finished?.count == 20)
        try await retry.value
        #expect(clock.now.offset == .seconds(30))
    }

    @Test func theREADMEShowsExactlyThisCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Testing code that uses the bus").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let testLines = Set(lines(test))
        let missing = lines(block).filter { !testLines.contains($0) }
        #expect(missing == [], "README lines not in the compiled example")
    }
}
