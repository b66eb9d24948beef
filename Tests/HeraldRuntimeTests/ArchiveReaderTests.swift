import Foundation
import Herald
import HeraldRuntime
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
}
