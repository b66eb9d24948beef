import Foundation
import Testing
import HeraldTestSupport

/// `herald tail` on archives written the way a file subscriber writes them.
@Suite struct TailCommandTests {
    static let herald = BuiltProducts.url(of: "herald")

    /// An archive rotated twice, with a line that is not JSON and a torn last line.
    func archive() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tail-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"seq":1,"time":"t1","topic":"loader.home.finished","sender":"loader.home","event":{"a":1}}"#.utf8 + [10])
            .write(to: directory.appendingPathComponent("events.2.jsonl"))
        try Data((#"{"seq":2,"time":"t2","topic":"loader.images.finished","sender":"loader.images","event":{"b":2}}"# + "\nnot json\n").utf8)
            .write(to: directory.appendingPathComponent("events.1.jsonl"))
        try Data((#"{"seq":3,"time":"t3","topic":"bus.dropped","event":{}}"# + "\n" + #"{"seq":4,"ti"#).utf8)
            .write(to: directory.appendingPathComponent("events.jsonl"))
        return directory.appendingPathComponent("events.jsonl")
    }

    @Test(.timeLimit(.minutes(5)))
    func printsEveryFileOldestFirstAndShowsBadLinesAsSuch() async throws {
        let herald = try #require(Self.herald)
        let file = try archive()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["tail", file.path]))
        #expect(result.status == 0)
        #expect(result.stdout == """
            t1  loader.home.finished  loader.home  #1  {"a":1}
            t2  loader.images.finished  loader.images  #2  {"b":2}
            (not JSON) not json
            t3  bus.dropped  -  #3  {}
            (torn, no newline) {"seq":4,"ti

            """)
    }

    @Test(.timeLimit(.minutes(5)))
    func filtersByTopicAndPrintsRawLinesWithJSON() async throws {
        let herald = try #require(Self.herald)
        let file = try archive()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["tail", file.path, "--topic", "loader.*.finished", "--json"]))
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.first == #"{"seq":1,"time":"t1","topic":"loader.home.finished","sender":"loader.home","event":{"a":1}}"#)
        #expect(!result.stdout.contains("bus.dropped"))
    }

    @Test(.timeLimit(.minutes(5)))
    func badInputIsOneLineAndTheRightExitCode() async throws {
        let herald = try #require(Self.herald)
        let missing = try #require(try await ChildProcess.run(herald, ["tail", "/nonexistent/events.jsonl"]))
        #expect(missing.status == 1)
        #expect(missing.stderr == "herald: /nonexistent/events.jsonl: no such file\n")
        let badPattern = try #require(try await ChildProcess.run(herald, ["tail", "x.jsonl", "--topic", "a.>.b"]))
        #expect(badPattern.status == 2)
        #expect(badPattern.stderr.hasPrefix("herald: --topic: invalid topic pattern"))
        let noPath = try #require(try await ChildProcess.run(herald, ["tail"]))
        #expect(noPath.status == 2)
    }

    @Test(.timeLimit(.minutes(5)))
    func followPrintsWhatIsAppendedAndStopsOnSIGTERM() async throws {
        let herald = try #require(Self.herald)
        let file = try archive()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let child = try ChildProcess(herald, ["tail", file.path, "--follow"])
        #expect(await child.waitForStandardOutput { $0.contains("t3  bus.dropped") })
        // Complete the torn line and add one more, as a writer would.
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((#"me":"t4","topic":"loader.todos.finished","event":{}}"# + "\n"
            + #"{"seq":5,"time":"t5","topic":"loader.home.failed","sender":"loader.home","event":{}}"# + "\n").utf8))
        try handle.close()
        #expect(await child.waitForStandardOutput { $0.contains("t5  loader.home.failed  loader.home  #5") })
        #expect(child.stdout.contains("t4  loader.todos.finished"))
        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
    }

    /// A rotation while following: the line appended to the old file just before it moved is
    /// shown, then the new file from its start; nothing waits on a timer to see either.
    @Test(.timeLimit(.minutes(5)))
    func followFollowsARotationWithoutLosingTheOldFilesLastLine() async throws {
        let herald = try #require(Self.herald)
        let file = try archive()
        let directory = file.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try ChildProcess(herald, ["tail", file.path, "--follow"])
        #expect(await child.waitForStandardOutput { $0.contains("t3  bus.dropped") })
        // As a file subscriber rotates: the last line goes to the live file, which then moves
        // away (the older files shift first), and a new live file is made.
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((#"me":"t4","topic":"loader.todos.finished","event":{}}"# + "\n").utf8))
        try handle.close()
        try FileManager.default.moveItem(at: directory.appendingPathComponent("events.2.jsonl"), to: directory.appendingPathComponent("events.3.jsonl"))
        try FileManager.default.moveItem(at: directory.appendingPathComponent("events.1.jsonl"), to: directory.appendingPathComponent("events.2.jsonl"))
        try FileManager.default.moveItem(at: file, to: directory.appendingPathComponent("events.1.jsonl"))
        try Data((#"{"seq":5,"time":"t5","topic":"loader.home.failed","sender":"loader.home","event":{}}"# + "\n").utf8).write(to: file)
        #expect(await child.waitForStandardOutput { $0.contains("t5  loader.home.failed  loader.home  #5") })
        #expect(child.stdout.contains("t4  loader.todos.finished"), "the old file's last line: \(child.stdout)")
        #expect(child.stdout.components(separatedBy: "t1  loader.home.finished").count == 2, "the rotated files are not shown again")
        child.signal(SIGINT)
        let result = try #require(await child.finish())
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "stderr: \(result.stderr)")
    }

}
