import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No file write, fsync, rename or truncation of the daemon runs on Swift's cooperative pool:
/// a real `herald run` under `strace -f` (which `.ci/run` installs) touches files only from the
/// threads Herald names for its I/O (`herald.*`: the state, sink, log and media threads).
@Suite struct NoFileIOOnThePoolTests {
    /// The system calls that write to, sync, cut or rename a file.
    static let calls = ["write", "pwrite64", "writev", "fsync", "fdatasync", "ftruncate", "rename", "renameat", "renameat2"]

    @Test(.timeLimit(.minutes(10)))
    func everyFileWriteSyncAndRenameOfARunIsOnAHeraldIOThread() async throws {
        let herald = try #require(RunCommandTests.herald)
        let strace = try #require(["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) },
                                  "strace is needed (.ci/run installs it)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-strace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The shipped config, with a todo every second (so a post's intent is journaled and sent)
        // and a second log subscriber that writes to a file.
        var config = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("config.json"))) as? [String: Any])
        var sandbox = try #require(config["sandbox"] as? [String: Any])
        sandbox["todoInterval"] = "1s"
        config["sandbox"] = sandbox
        var loaders = try #require(config["loaders"] as? [String: Any])
        var todos = try #require(loaders["todos"] as? [String: Any])
        todos["every"] = "1s"
        loaders["todos"] = todos
        config["loaders"] = loaders
        var subscribers = try #require(config["subscribers"] as? [String: Any])
        subscribers["file-log"] = ["kind": "log", "topics": [">"], "level": "info", "output": "var/herald.log"]
        config["subscribers"] = subscribers
        config.removeValue(forKey: "$schema")
        config["http"] = ["listen": "127.0.0.1:0"]   // a free port: tests run side by side
        let file = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        let trace = directory.appendingPathComponent("trace.txt").path

        let child = try ChildProcess(URL(fileURLWithPath: strace), [
            "-f", "-qq", "-y", "-o", trace, "-e", "trace=" + (Self.calls + ["prctl"]).joined(separator: ","),
            herald.path, "run", "--config", file.path,
        ], in: directory)
        #expect(await child.waitForStandardError { $0.contains("post.todo-tweet.sent") && $0.contains("loader.home.finished") },
                "stderr: \(child.stderr)")
        // SIGTERM to herald itself (strace passes it on to its tracee, which stops in order).
        let pid = try #require(Self.tracee(of: child.pid))
        kill(pid, SIGTERM)
        let result = await child.finish()
        #expect(result?.status == 0, "stderr: \(child.stderr)")

        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        var names: [String: String] = [:]      // thread id -> its last PR_SET_NAME
        var onIOThreads = 0
        var offenders: [String] = []
        var firstOffender: String?     // its thread id
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2 else { continue }
            let (tid, call) = (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
            // A Herald I/O thread names itself once, after the runtime named it; under the thread
            // sanitizer the runtime's lines can come later in the trace, so a herald name sticks.
            if call.hasPrefix("prctl(PR_SET_NAME, \""), let name = call.split(separator: "\"").dropFirst().first {
                if names[tid]?.hasPrefix("herald.") != true { names[tid] = String(name) }
                continue
            }
            // Named through /proc instead (the thread sanitizer's pthread_setname_np does so):
            // write(N</proc/P/task/T/comm>, "herald.sink.arc", 15).
            if call.hasPrefix("write("), let path = Self.descriptorPath(call), path.hasSuffix("/comm"),
               let named = path.split(separator: "/").dropLast().last, let name = call.split(separator: "\"").dropFirst().first {
                if names[String(named)]?.hasPrefix("herald.") != true { names[String(named)] = String(name) }
                continue
            }
            guard let name = Self.calls.first(where: { call.hasPrefix($0 + "(") }),
                  Self.touchesAFile(call, name, under: directory.path) else { continue }
            if names[tid]?.hasPrefix("herald.") == true {
                onIOThreads += 1
            } else {
                offenders.append("\(names[tid] ?? "thread \(tid)"): \(call)")
                if firstOffender == nil { firstOffender = tid }
            }
        }
        // On a failure, what the trace says of the first offending thread.
        let story = firstOffender.map { tid in lines.filter { $0.hasPrefix(tid + " ") }.prefix(30).joined(separator: "\n") } ?? ""
        #expect(offenders.isEmpty, "file I/O off Herald's I/O threads:\n\(offenders.prefix(20).joined(separator: "\n"))\n\(story)")
        // The run did write: the archive, its fsync, the loaders' state files and their renames,
        // the outbox, the log file.
        #expect(onIOThreads >= 10, "file calls seen on Herald's I/O threads: \(onIOThreads)")
        let log = try String(contentsOf: directory.appendingPathComponent("var/herald.log"), encoding: .utf8)
        #expect(log.contains("loader.home.finished"))
    }

    /// Whether a traced call writes, syncs, cuts or renames a file of the run, under `directory`
    /// (not a pipe, socket or eventfd, nor a sanitizer runtime's own file: `-y` prints a
    /// descriptor's path).
    static func touchesAFile(_ call: String, _ name: String, under directory: String) -> Bool {
        if name.hasPrefix("rename") { return call.contains("\"" + directory + "/") }
        guard let open = call.firstIndex(of: "<") else { return false }
        return call[call.index(after: open)...].hasPrefix(directory + "/")
    }

    /// The path `-y` printed for a call's first descriptor (`write(3</a/b>, ...`).
    static func descriptorPath(_ call: String) -> String? {
        guard let open = call.firstIndex(of: "<"), let close = call[open...].firstIndex(of: ">") else { return nil }
        return String(call[call.index(after: open)..<close])
    }

    /// The process strace started (its one child).
    static func tracee(of pid: Int32) -> Int32? {
        guard let children = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else { return nil }
        return children.split(separator: " ").first.flatMap { Int32($0) }
    }
}
