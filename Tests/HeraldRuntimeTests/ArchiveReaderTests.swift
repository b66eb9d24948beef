import Foundation
import Herald
@testable import HeraldSubscribers
import HeraldTestSupport
import Testing

@Suite struct ArchiveReaderTests {
    @Test func linesAreClassifiedAndFilteredByTopic() {
        let reader = ArchiveReader(path: "unused", patterns: ["loader.>"])
        let data = Data((#"{"seq":1,"topic":"loader.home.finished"}"# + "\n" + #"{"seq":2,"topic":"bus.dropped"}"# + "\n"
            + "[1,2]\n" + "garbage\n" + #"{"seq":3"#).utf8)
        #expect(reader.parse(data) == [
            .envelope(topic: "loader.home.finished", text: #"{"seq":1,"topic":"loader.home.finished"}"#),
            .notJSON("[1,2]"),
            .notJSON("garbage"),
            .torn(#"{"seq":3"#),
        ])
    }

    @Test func prettyLinesEscapeControlCharacters() {
        let line = ArchiveReader.Line.envelope(
            topic: "loader.home.failed",
            text: #"{"seq":7,"time":"t","topic":"loader.home.failed","sender":"loader.home","event":{"m":"a\nb\u001b[31m"}}"#)
        let pretty = ArchiveReader.pretty(line)
        #expect(pretty.hasPrefix("t  loader.home.failed  loader.home  #7  "))
        #expect(!pretty.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func rotatedFilesComeFirstOldestFirst() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["events.jsonl", "events.1.jsonl", "events.2.jsonl", "events.3.jsonl"] {
            try Data().write(to: directory.appendingPathComponent(name))
        }
        let reader = ArchiveReader(path: directory.appendingPathComponent("events.jsonl").path)
        #expect(reader.files().map { URL(fileURLWithPath: $0).lastPathComponent }
            == ["events.3.jsonl", "events.2.jsonl", "events.1.jsonl", "events.jsonl"])
    }

    // MARK: The last sequence number

    /// A fresh directory with the named files (each one's lines as given, verbatim).
    func archive(_ files: [String: String]) throws -> (directory: URL, reader: ArchiveReader) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        return (directory, ArchiveReader(path: directory.appendingPathComponent("events.jsonl").path))
    }

    static func line(_ seq: UInt64) -> String { #"{"seq":\#(seq),"time":"t","topic":"a.b","event":{"text":"x\ny"}}"# + "\n" }

    @Test func noArchiveOrAnEmptyOneHasNoLastSequence() throws {
        let (directory, reader) = try archive([:])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try reader.lastSequence() == nil)
        try Data().write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence() == nil)
        try Data("\n\n".utf8).write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence() == nil)
    }

    @Test func aTornLastLineIsNotCounted() throws {
        let (directory, reader) = try archive(["events.jsonl": Self.line(1) + Self.line(2) + #"{"seq":3,"time""#])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try reader.lastSequence() == 2)
        let onlyTorn = try archive(["events.jsonl": #"{"seq":9}"#])
        defer { try? FileManager.default.removeItem(at: onlyTorn.directory) }
        #expect(try onlyTorn.reader.lastSequence() == nil)
    }

    @Test func theLargestOfTheLastLinesCountsNotJustTheLast() throws {
        // Two publishers raced: 12 was queued before 11.
        let (directory, reader) = try archive(["events.jsonl": Self.line(10) + Self.line(12) + Self.line(11) + "not json\n"])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try reader.lastSequence() == 12)
        #expect(try reader.lastSequence(window: 1) == 11, "the window counts lines with a seq only")
    }

    @Test func anEmptyLiveFileFallsBackToTheNewestRotatedFile() throws {
        let (directory, reader) = try archive([
            "events.jsonl": "", "events.1.jsonl": Self.line(7) + Self.line(8), "events.2.jsonl": Self.line(30),
        ])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try reader.lastSequence(window: 2) == 8, "older rotated files are not read once the window is full")
        try Data(Self.line(9).utf8).write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence(window: 2) == 9)
        #expect(try reader.lastSequence(window: 1) == 9)
        let removed = try archive(["events.1.jsonl": Self.line(4)])
        defer { try? FileManager.default.removeItem(at: removed.directory) }
        #expect(try removed.reader.lastSequence() == 4, "a live file not made yet after a rotation")
    }

    @Test func linesAreReadBackwardsAcrossChunksAndOnlyAsFarAsNeeded() throws {
        let text = (1...50).map { Self.line($0) }.joined() + "{\"torn"
        let (directory, reader) = try archive(["events.jsonl": text])
        defer { try? FileManager.default.removeItem(at: directory) }
        for chunkSize in [1, 7, 64, 1 << 20] {
            var seen: [UInt64] = []
            try ArchiveReader.forEachCompleteLineBackwards(in: reader.path, chunkSize: chunkSize) { line in
                seen.append(ArchiveReader.sequence(in: line) ?? 0)
                return true
            }
            #expect(seen == Array((1...50).reversed()), "chunk size \(chunkSize)")
        }
        var calls = 0
        try ArchiveReader.forEachCompleteLineBackwards(in: reader.path, chunkSize: 7) { _ in
            calls += 1
            return false
        }
        #expect(calls == 1)
        #expect(try reader.lastSequence() == 50)
    }

    // MARK: Long lines

    /// An archive in memory that counts the bytes the scan reads.
    final class CountingSource {
        let bytes: [UInt8]
        private(set) var bytesRead = 0
        private(set) var reads = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func read(at offset: UInt64, count: Int) -> [UInt8] {
            reads += 1
            bytesRead += count
            return Array(bytes[Int(offset)..<(Int(offset) + count)])
        }
    }

    static let twentyMB = 20 * 1024 * 1024

    /// The lines a backward scan of `source` hands out (as `seq`, or -length for a line without one).
    static func scan(_ source: CountingSource, lineLimit: Int = ArchiveReader.lineLimit,
                     readLimit: UInt64 = ArchiveReader.readLimit) throws -> [Int] {
        var seen: [Int] = []
        try ArchiveReader.forEachCompleteLineBackwards(
            size: UInt64(source.bytes.count), lineLimit: lineLimit, readLimit: readLimit,
            read: { source.read(at: $0, count: $1) }) { line in
            seen.append(ArchiveReader.sequence(in: line).map { Int($0) } ?? -line.count)
            return true
        }
        return seen
    }

    // The 20 MB scans run on a thread of their own (`onDedicatedThread`): under the thread
    // sanitizer they compute for seconds, which must not hold the cooperative pool.

    @Test func aTwentyMegabyteTornLastLineIsReadOnceAndTheLinesBeforeItCount() async throws {
        let (seen, bytesRead, size) = try await onDedicatedThread {
            let source = CountingSource(Array((Self.line(1) + Self.line(2)).utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Self.twentyMB))
            return (try Self.scan(source), source.bytesRead, source.bytes.count)
        }
        #expect(seen == [2, 1])
        #expect(bytesRead == size, "each byte is read once")
    }

    @Test func aCompleteLineLongerThanTheLimitIsSkippedLikeATornOne() async throws {
        let (seen, bytesRead, size) = try await onDedicatedThread {
            let huge = [UInt8](repeating: UInt8(ascii: "x"), count: Self.twentyMB) + [UInt8(ascii: "\n")]
            let source = CountingSource(Array((Self.line(1) + Self.line(2)).utf8) + huge + Array(Self.line(3).utf8))
            return (try Self.scan(source), source.bytesRead, source.bytes.count)
        }
        #expect(seen == [3, 2, 1], "the oversized line is not handed out")
        #expect(bytesRead == size)
        let limited = CountingSource(Array(Self.line(1).utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: 100) + [10])
        #expect(try Self.scan(limited, lineLimit: 100) == [-100, 1], "a line of exactly the limit is kept")
        #expect(try Self.scan(CountingSource(limited.bytes), lineLimit: 99) == [1])
    }

    @Test func theScanStopsAtItsReadLimit() async throws {
        let limit: UInt64 = 2 * 1024 * 1024
        let (seen, bytesRead) = try await onDedicatedThread {
            let source = CountingSource(Array(Self.line(1).utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Self.twentyMB))
            return (try Self.scan(source, readLimit: limit), source.bytesRead)
        }
        #expect(seen == [], "the good line lies beyond the limit")
        #expect(bytesRead <= Int(limit))
        #expect(bytesRead > 0)
    }

    @Test func lastSequenceGoesOnFromTheLastGoodLineBeforeATwentyMegabyteLine() async throws {
        var text = Data((Self.line(7) + Self.line(8)).utf8)
        text.append(Data(repeating: UInt8(ascii: "z"), count: Self.twentyMB))
        let (directory, reader) = try archive(["events.1.jsonl": Self.line(3)])
        defer { try? FileManager.default.removeItem(at: directory) }
        try text.write(to: URL(fileURLWithPath: reader.path))
        let path = reader.path
        #expect(try await onDedicatedThread { try ArchiveReader(path: path).lastSequence() } == 8)
    }

    @Test func aCompleteLineOverTheLimitCountsByItsLeadingSeqButATornOneDoesNot() throws {
        let padding = String(repeating: "p", count: 2 * ArchiveReader.lineLimit)
        let big = #"{"seq":99,"time":"t","topic":"a.b","event":{"pad":""# + padding + #""}}"#
        let (directory, reader) = try archive(["events.jsonl": Self.line(5) + big + "\n"])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try reader.lastSequence() == 99, "the newest line, though too long to parse, was archived whole")
        #expect(try reader.lastSequence(window: 2) == 99)

        try Data((Self.line(5) + big + "\n" + Self.line(6) + #"{"seq":100,"pad":""# + padding).utf8).write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence() == 99, "the torn line's number was never archived")
        try Data((Self.line(5) + padding + "\n").utf8).write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence() == 5, "an oversized line without a leading seq does not count")
        try Data((big + "\n" + Self.line(3)).utf8).write(to: URL(fileURLWithPath: reader.path))
        #expect(try reader.lastSequence() == 99, "the file's first line")
    }

    @Test func aLeadingSequenceIsReadOnlyFromTheFileSinksOpening() {
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"seq":42,"time""#.utf8)) == 42)
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"seq":42}"#.utf8)) == 42)
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"seq":42"#.utf8)) == nil, "cut before the number ends")
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"seq":-1,"#.utf8)) == nil)
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"seq":99999999999999999999,"#.utf8)) == nil)
        #expect(ArchiveReader.leadingSequence(in: Data(#"{"time":"t","seq":4,"#.utf8)) == nil)
    }
}
