import Foundation
import Herald
import HeraldSubscribers
import HeraldTestSupport
import HeraldTesting
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An event for the sink to archive.
struct SinkNote: Event, Hashable {
    static let topic: Topic = "test.sink.note"
    var topic: Topic { Self.topic }
    var text: String
}

@Suite struct FileSinkTests {
    static let publishedAt = Date(timeIntervalSince1970: 1_800_000_000.25)

    /// A fresh directory for one test.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func bus() -> EventBus {
        EventBus(configuration: .init(clock: { publishedAt }))
    }

    static func lines(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "the file ends with a whole line")
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func notes(_ path: String) throws -> [String] {
        try lines(path).compactMap { line in
            let object = try object(line)
            guard object["topic"] as? String == SinkNote.topic.name else { return nil }
            return (object["event"] as? [String: Any])?["text"] as? String
        }
    }

    @Test func eachEnvelopeIsOneJSONLineWithMillisecondUTCTime() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        let sink = FileSink(path: path)
        let running = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "one"), from: "tester")
        try bus.post(SinkNote(text: "two\nlines"))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()

        let lines = try Self.lines(path)
        #expect(lines.count == 2)
        let first = try Self.object(try #require(lines.first))
        #expect(Set(first.keys) == ["seq", "time", "topic", "sender", "id", "correlation", "event"])
        #expect(first["time"] as? String == "2027-01-15T08:00:00.250Z")
        #expect(first["topic"] as? String == "test.sink.note")
        #expect(first["sender"] as? String == "tester")
        #expect((first["event"] as? [String: Any])?["text"] as? String == "one")
        let second = try Self.object(lines[1])
        #expect((second["seq"] as? Int ?? 0) > (first["seq"] as? Int ?? 0))
        #expect((second["event"] as? [String: Any])?["text"] as? String == "two\nlines")
        #expect(sink.statistics.lines == 2)
    }

    @Test func fileIsCreatedWithMode0600InNewParentDirectories() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("var/archive/events.jsonl").path
        let bus = Self.bus()
        let sink = FileSink(path: path, durability: .none)
        let running = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "hello"))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()

        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try Self.notes(path) == ["hello"])
    }

    @Test func alwaysSyncsEveryLineBeforeItCountsAsDelivered() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        let sink = FileSink(path: path, durability: .always)
        let running = await RunningGroup("sink", sink.service(on: bus))
        for index in 1...5 { try bus.post(SinkNote(text: "\(index)")) }
        _ = await bus.shutdown(timeout: .seconds(3_600))

        // Delivered means written and synced: a second reader sees every line before stop.
        let reader = try #require(FileHandle(forReadingAtPath: path))
        let text = String(decoding: try reader.readToEnd() ?? Data(), as: UTF8.self)
        try reader.close()
        #expect(text.split(separator: "\n").count == 5)
        #expect(sink.statistics.syncs == 5)
        await running.stop()
        #expect(sink.statistics.syncs == 5, "nothing left to sync at stop")
    }

    @Test func batchSyncsOnTheClockAndOnStop() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let clock = ManualClock()
        let bus = Self.bus()
        let sink = FileSink(path: path, durability: .batch, syncEvery: .milliseconds(100), clock: clock)
        let running = await RunningGroup("sink", sink.service(on: bus))
        for index in 1...3 { try bus.post(SinkNote(text: "\(index)")) }
        _ = await bus.shutdown(timeout: .seconds(3_600))
        #expect(sink.statistics.lines == 3)
        #expect(sink.statistics.syncs == 0, "no sync before the period has passed")

        // Given the group commit asleep, when its period passes, then one sync covers all three.
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        await clock.waitForSleepers(1)
        #expect(sink.statistics.syncs == 1)

        // A period with nothing written syncs nothing.
        clock.advance(by: .milliseconds(100))
        await clock.waitForSleepers(1)
        #expect(sink.statistics.syncs == 1)

        // Stop syncs what was written since the last period.
        let envelope = Envelope<any Event>(topic: SinkNote.topic, sender: nil, id: EventID(bus: UUID(), sequence: 99),
                                           correlationID: EventID(bus: UUID(), sequence: 99),
                                           timestamp: Self.publishedAt, event: SinkNote(text: "4"))
        try sink.archive(envelope)
        await running.stop()
        #expect(sink.statistics.syncs == 2)
        #expect(try Self.notes(path) == ["1", "2", "3", "4"])
    }

    @Test func rotationKeepsExactlyKeepFilesInOrder() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        // Every line is longer than half the limit, so each file holds one line.
        let sink = FileSink(path: path, durability: .none, rotation: FileSinkRotation(maxBytes: 300, keep: 2))
        let running = await RunningGroup("sink", sink.service(on: bus))
        for index in 1...5 { try bus.post(SinkNote(text: "note \(index) " + String(repeating: "x", count: 100))) }
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["events.1.jsonl", "events.2.jsonl", "events.jsonl"])
        let first = { (path: String) in try Self.notes(path).map { $0.prefix(6) } }
        #expect(try first(FileSinkRotation.rotatedPath(path, index: 2)) == ["note 3"])
        #expect(try first(FileSinkRotation.rotatedPath(path, index: 1)) == ["note 4"])
        #expect(try first(path) == ["note 5"])
        #expect(sink.statistics.rotations == 4)
    }

    @Test func rotatedNamesPutTheIndexBeforeTheExtension() {
        #expect(FileSinkRotation.rotatedPath("var/events.jsonl", index: 2) == "var/events.2.jsonl")
        #expect(FileSinkRotation.rotatedPath("var.d/events", index: 1) == "var.d/events.1")
        #expect(FileSinkRotation.rotatedPath(".events", index: 3) == ".events.3")
    }

    @Test func tornLastLineIsMovedAsideAndReportedKeepingCompleteLines() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let complete = "{\"seq\":1}\n{\"seq\":2}\n"
        try Data((complete + "{\"seq\":3,\"ti").utf8).write(to: URL(fileURLWithPath: path))
        let bus = Self.bus()
        let reports = try bus.events(of: FileSinkTornLine.self)
        let sink = FileSink(name: "archive", path: path)
        let running = await RunningGroup("sink", sink.service(on: bus))
        var iterator = reports.makeAsyncIterator()
        let report = await iterator.next()
        reports.subscription.cancel()
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()

        #expect(report == FileSinkTornLine(sink: "archive", path: path, byteCount: 12, movedTo: path + ".torn",
                                           keptBytes: complete.utf8.count))
        #expect(report?.topic == "sink.archive.torn")
        #expect(sink.statistics.tornLines == 1)
        #expect(try String(contentsOfFile: path + ".torn", encoding: .utf8) == "{\"seq\":3,\"ti\n")
        let lines = try Self.lines(path)
        #expect(Array(lines.prefix(2)) == ["{\"seq\":1}", "{\"seq\":2}"])
        #expect(lines.count == 3, "the report itself is archived after the kept lines")
        #expect(try Self.object(lines[2])["topic"] as? String == "sink.archive.torn")
    }

    @Test func unwritablePathFailsOnTheBusAndTheSinkRecovers() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file where a directory should be: unwritable even for root.
        let blocker = directory.appendingPathComponent("blocked")
        try Data("not a directory".utf8).write(to: blocker)
        let path = blocker.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        let failures = try bus.events(of: SubscriberFailed.self)
        let sink = FileSink(name: "archive", path: path, durability: .always)
        let running = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "lost"))

        var iterator = failures.makeAsyncIterator()
        let failure = try #require(await iterator.next())
        #expect(failure.subscription == "archive")
        #expect(failure.eventTopic == SinkNote.topic)
        #expect(failure.error.contains("file sink"), "a clear reason: \(failure.error)")
        #expect(failure.error.contains("blocked/events.jsonl: Not a directory"), "names the path and why: \(failure.error)")
        failures.subscription.cancel()

        // When the path becomes writable, the next event is archived.
        try FileManager.default.removeItem(at: blocker)
        try bus.post(SinkNote(text: "kept"))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()
        #expect(try Self.notes(path) == ["kept"])
        #expect(sink.statistics.failures >= 1)
    }

    @Test func diskFullFailsOnTheBusAndTheSinkKeepsGoing() async throws {
        // /dev/full answers every write with ENOSPC.
        let bus = Self.bus()
        let failures = try bus.events(of: SubscriberFailed.self)
        let sink = FileSink(name: "full", path: "/dev/full", durability: .none)
        let running = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "one"))
        try bus.post(SinkNote(text: "two"))

        var iterator = failures.makeAsyncIterator()
        let first = try #require(await iterator.next())
        let second = try #require(await iterator.next())
        failures.subscription.cancel()
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()
        #expect([first.subscription, second.subscription] == ["full", "full"])
        #expect(first.error.contains("/dev/full") && first.error.contains("errno \(ENOSPC)"), "\(first.error)")
        #expect(second.eventSequence > first.eventSequence, "every event is tried again")
        #expect(sink.statistics.lines == 0)
    }

    @Test func linesAreTheEnvelopesOwnEncodingWithMillisecondDates() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none)
        let busID = UUID()
        let times = [0, 1_800_000_000.25, 1_800_000_059.999, -0.5, 253_402_300_799.001]
        let senders: [Sender?] = [nil, "loader.home", "quote \" back \\ nl \n tab \t bell \u{7} é 🙂 /"]
        var envelopes: [Envelope<any Event>] = []
        for (index, time) in times.enumerated() {
            let id = EventID(bus: busID, sequence: UInt64(index + 1))
            envelopes.append(Envelope(topic: SinkNote.topic, sender: senders[index % senders.count], id: id,
                                      correlationID: EventID(bus: UUID(), sequence: 7),
                                      timestamp: Date(timeIntervalSince1970: time), event: SinkNote(text: "n\(index) \"x\"\n")))
        }
        for envelope in envelopes { try sink.archive(envelope) }
        sink.close()

        let reference = JSONEncoder()
        reference.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        }
        let lines = try Self.lines(path)
        #expect(lines.count == envelopes.count)
        for (line, envelope) in zip(lines, envelopes) {
            let written = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
            let expected = try #require(JSONSerialization.jsonObject(with: reference.encode(envelope)) as? NSDictionary)
            #expect(written == expected, "\(line)")
        }
        #expect(try Self.object(lines[1])["time"] as? String == "2027-01-15T08:00:00.250Z")
        #expect(try Self.object(lines[3])["time"] as? String == "1969-12-31T23:59:59.500Z")
    }

    static func envelope(_ sequence: UInt64, _ text: String) -> Envelope<any Event> {
        let id = EventID(bus: UUID(), sequence: sequence)
        return Envelope(topic: SinkNote.topic, sender: nil, id: id, correlationID: id, timestamp: publishedAt,
                        event: SinkNote(text: text))
    }

    @Test func aFileWithNoNewlineAtAllIsMovedAsideWhole() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        try Data("{\"seq\":1,".utf8).write(to: URL(fileURLWithPath: path))
        let sink = FileSink(path: path, durability: .none)
        let report = try sink.archive(Self.envelope(2, "after"))
        sink.close()
        #expect(report?.byteCount == 9)
        #expect(report?.keptBytes == 0)
        #expect(try String(contentsOfFile: path + ".torn", encoding: .utf8) == "{\"seq\":1,\n")
        #expect(try Self.notes(path) == ["after"])
    }

    @Test func reopeningAppendsAfterCompleteLinesWithoutAReport() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let first = FileSink(path: path, durability: .none)
        #expect(try first.archive(Self.envelope(1, "one")) == nil)
        first.close()
        let second = FileSink(path: path, durability: .none)
        #expect(try second.archive(Self.envelope(2, "two")) == nil)
        second.close()
        #expect(try Self.notes(path) == ["one", "two"])
        #expect(!FileManager.default.fileExists(atPath: path + ".torn"))
    }

    @Test func noneNeverSyncsEvenOnStop() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none)
        for sequence in 1...3 { try sink.archive(Self.envelope(UInt64(sequence), "\(sequence)")) }
        sink.close()
        #expect(sink.statistics.syncs == 0)
        #expect(sink.statistics.lines == 3)
    }

    @Test func rotationWithKeepZeroKeepsOnlyTheLiveFile() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none, rotation: FileSinkRotation(maxBytes: 1, keep: 0))
        for sequence in 1...3 { try sink.archive(Self.envelope(UInt64(sequence), "\(sequence)")) }
        sink.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["events.jsonl"])
        #expect(try Self.notes(path) == ["3"], "a line longer than maxBytes is still written whole")
    }

    @Test(arguments: [[TopicPattern("test.sink.*")], ["nothing.here", "test.sink.>"]])
    func onlyTopicsMatchingThePatternsAreArchived(patterns: [TopicPattern]) async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        let sink = FileSink(path: path, patterns: patterns, durability: .none)
        let running = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "kept"))
        try bus.post(FileSinkTornLine(sink: "other", path: "x", byteCount: 1, movedTo: "x.torn", keptBytes: 0))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        await running.stop()
        #expect(try Self.lines(path).count == 1)
        #expect(try Self.notes(path) == ["kept"])
    }

    /// One lifecycle: a second run while the first archives is refused (it would subscribe
    /// twice and write every line twice); once the first ended, the sink may run again.
    @Test func aSinkRunsOnceAtATimeAndAgainAfterItsRunEnded() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let bus = Self.bus()
        let sink = FileSink(path: path, durability: .none)
        let running = await RunningGroup("sink", sink.service(on: bus))
        await #expect(throws: FileSinkError.self) { try await sink.run(on: bus) }
        try bus.post(SinkNote(text: "once"))
        try await running.stop().get()
        let again = await RunningGroup("sink", sink.service(on: bus))
        try bus.post(SinkNote(text: "again"))
        _ = await bus.shutdown(timeout: .seconds(3_600))
        try await again.stop().get()
        #expect(try Self.notes(path) == ["once", "again"])
    }

}
