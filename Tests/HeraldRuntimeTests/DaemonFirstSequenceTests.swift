import Foundation
@testable import HeraldRuntime
import Testing

@Suite struct DaemonFirstSequenceTests {
    /// A configuration with two file subscribers, `a` (`a/events.jsonl`) and `b` (`b.jsonl`),
    /// relative to `directory`, and a log subscriber.
    static func configuration(in directory: URL) throws -> HeraldConfiguration {
        var object = ConfigFixtures.demo
        object["state"] = directory.appendingPathComponent("state").path
        var subscribers = object["subscribers"] as? [String: Any] ?? [:]
        subscribers["a"] = ["kind": "file", "path": "a/events.jsonl"] as [String: Any]
        subscribers["b"] = ["kind": "file", "path": "b.jsonl", "topics": ["loader.>"]] as [String: Any]
        object["subscribers"] = subscribers
        return try ConfigLoader(environment: [:]).parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: directory)
    }

    static func write(_ text: String, to name: String, in directory: URL) throws {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test func theBusStartsAfterTheLargestSeqOfEveryArchive() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-first-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try Self.configuration(in: directory)
        #expect(HeraldDaemon.firstSequence(after: configuration) == 1, "no archive yet")

        try Self.write(#"{"seq":5}"# + "\n" + #"{"seq":9}"# + "\n" + #"{"seq":100,"to"#, to: "a/events.jsonl", in: directory)
        #expect(HeraldDaemon.firstSequence(after: configuration) == 10, "the torn line's number was never archived")

        // `b` was just rotated: its live file is empty, its newest rotated file has the larger number.
        try Self.write("", to: "b.jsonl", in: directory)
        try Self.write(#"{"seq":12}"# + "\n", to: "b.1.jsonl", in: directory)
        #expect(HeraldDaemon.firstSequence(after: configuration) == 13)
    }
}
