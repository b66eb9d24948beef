import Foundation
import HeraldIO
import Testing

/// `herald tail --follow` waits on the file, not on a timer: with a fallback tick of an hour, only
/// the kernel's notification can wake these waits (the test would hit its time limit otherwise).
@Suite(.timeLimit(.minutes(5))) struct FileChangeWatcherTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    #if canImport(Glibc)
    @Test func anAppendARotationAndANewFileEachWakeTheWatcher() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("events.jsonl")
        try Data("one\n".utf8).write(to: file)
        let watcher = try FileChangeWatcher(path: file.path, fallbackInterval: .seconds(3_600))
        var changes = watcher.changes.makeAsyncIterator()
        #expect(await changes.next() != nil, "the watch is in place")

        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("two\n".utf8))
        try handle.close()
        #expect(await changes.next() != nil, "an append wakes it")

        try FileManager.default.moveItem(at: file, to: directory.appendingPathComponent("events.1.jsonl"))
        #expect(await changes.next() != nil, "the file rotated away wakes it")
        try Data("three\n".utf8).write(to: file)
        #expect(await changes.next() != nil, "the new file wakes it")

        watcher.stop()
        while await changes.next() != nil {}  // the changes finish once its thread has ended
        watcher.stop()  // a second stop is harmless
    }
    #endif

    @Test func aWatcherOfAMissingDirectoryTicksAndStops() async throws {
        let watcher = try FileChangeWatcher(path: "/nonexistent/\(UUID().uuidString)/events.jsonl", fallbackInterval: .milliseconds(1))
        var changes = watcher.changes.makeAsyncIterator()
        #expect(await changes.next() != nil, "it looks again on its fallback tick")
        watcher.stop()
        while await changes.next() != nil {}
    }
}
