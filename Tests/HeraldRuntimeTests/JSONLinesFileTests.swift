import Foundation
@testable import HeraldSubscribers
import Testing

@Suite struct JSONLinesFileTests {
    @Test func aShortWriteIsRolledBackAndTheNextLineLandsWhole() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        var (file, repair) = try JSONLinesFile.open(path: path)
        defer { file.close() }
        #expect(repair == nil)
        try file.append(Array("{\"seq\":1}\n".utf8))

        // Given a disk that takes only half a line, then the line is refused and taken back.
        file.writeLine = { descriptor, buffer in systemWrite(descriptor, buffer.baseAddress, buffer.count / 2) }
        #expect(throws: FileSinkError.self) { try file.append(Array("{\"seq\":2,\"long\":true}\n".utf8)) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"seq\":1}\n")

        // When the disk recovers, the next line follows the last whole one.
        file.writeLine = { descriptor, buffer in systemWrite(descriptor, buffer.baseAddress, buffer.count) }
        try file.append(Array("{\"seq\":3}\n".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"seq\":1}\n{\"seq\":3}\n")
        #expect(file.size == 20)
    }

    @Test func aShortWriteErrorSaysHowMuchWasRolledBack() throws {
        let error = FileSinkError(.shortWrite(written: 3, expected: 10), path: "/var/events.jsonl")
        #expect(error.description == "file sink: short write (3 of 10 bytes, rolled back) to /var/events.jsonl")
    }
}
