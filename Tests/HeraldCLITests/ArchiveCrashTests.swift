import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald run` with a file subscriber, killed mid-burst and restarted, and unable to write.
@Suite struct ArchiveCrashTests {
    static let herald = BuiltProducts.url(of: "herald")

    /// A directory with a config: one todo loader every 100ms (the sandbox's minimum) (a
    /// burst of small events from a single publisher, so the archive is in `seq` order), the
    /// archive on `durability: always`, and a console log whose lines wake the waits.
    func directoryWithConfig() throws -> (config: URL, archive: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {
              "state": "var/state",
              "services": {"baas": {"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}},
              "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "100ms"}},
              "subscribers": {
                "archive": {"kind": "file", "topics": [">"], "path": "var/events.jsonl", "durability": "always"},
                "console": {"kind": "log", "topics": ["loader.>", "bus.>"], "level": "info"}
              },
              "sandbox": {"port": 0}
            }
            """.utf8).write(to: config)
        return (config, directory.appendingPathComponent("var/events.jsonl"))
    }

    /// An archive file as read now: its complete lines, and the bytes after the last newline.
    struct ArchiveContents {
        var lines: [String]
        var torn: String?

        init(_ url: URL) {
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let last = lines.removeLast()
            self.lines = lines
            self.torn = last.isEmpty ? nil : last
        }

        /// Each complete line's `seq`, nil for a line that is not a JSON envelope with one.
        var sequences: [UInt64?] {
            lines.map { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["topic"] is String, let seq = object["seq"] as? NSNumber
                else { return nil }
                return seq.uint64Value
            }
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aKilledRunLosesNoWrittenLineAndTheRestartGoesOnNumbering() async throws {
        let herald = try #require(Self.herald)
        let (config, archive) = try directoryWithConfig()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }

        // Given a run archiving a burst of events,
        let first = try ChildProcess(herald, ["run", "--config", config.path])
        let burst = await first.waitForStandardError { _ in ArchiveContents(archive).lines.count >= 200 }
        #expect(burst, "stderr: \(first.stderr)")
        // when it is killed mid-burst,
        first.signal(SIGKILL)
        let killed = try #require(await first.finish())
        // Foundation reports a signal's number, the waitid fallback 128 + it; whichever came first.
        #expect([SIGKILL, 128 + SIGKILL].contains(killed.status))

        // then every line written is a whole envelope, except perhaps a torn last one.
        var atKill = ArchiveContents(archive)
        let sequencesAtKill = atKill.sequences.compactMap { $0 }
        #expect(sequencesAtKill.count == atKill.lines.count, "corrupt lines: \(atKill.lines)")
        #expect(sequencesAtKill == sequencesAtKill.sorted() && Set(sequencesAtKill).count == sequencesAtKill.count)
        let lastAtKill = try #require(sequencesAtKill.last)
        if atKill.torn == nil {
            // A write(2) to a regular file is rarely cut by SIGKILL; cut one as a crash would.
            let handle = try FileHandle(forWritingTo: archive)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(#"{"seq":999999,"time":"2026-"#.utf8))
            try handle.close()
            atKill.torn = #"{"seq":999999,"time":"2026-"#
        }
        let torn = try #require(atKill.torn)
        let linesAtKill = atKill.lines.count

        // When it runs again until more lines are archived, and is stopped,
        let second = try ChildProcess(herald, ["run", "--config", config.path])
        let more = await second.waitForStandardError { _ in ArchiveContents(archive).lines.count >= linesAtKill + 100 }
        #expect(more, "stderr: \(second.stderr)")
        second.signal(SIGTERM)
        let stopped = try #require(await second.finish())
        #expect(stopped.status == 0, "stderr: \(stopped.stderr)")
        // "herald: stopped", or, when the 3 s drain ran out on a slow machine, "herald: stopped
        // (N events not delivered)": what was archived is checked below either way.
        #expect(stopped.stderr.split(separator: "\n").last?.hasPrefix("herald: stopped") == true, "stderr: \(stopped.stderr.suffix(300))")

        // then the torn line was moved aside, every line at the kill is still there, no line
        // is corrupt, and the numbering went on after the last archived event without repeating.
        let after = ArchiveContents(archive)
        #expect(after.torn == nil)
        let tornFile = archive.deletingLastPathComponent().appendingPathComponent("events.jsonl.torn")
        #expect((try? String(contentsOf: tornFile, encoding: .utf8)) == torn + "\n")
        #expect(Array(after.lines.prefix(atKill.lines.count)) == atKill.lines)
        let sequences = after.sequences
        #expect(!sequences.contains(nil), "corrupt lines after the restart")
        let numbers = sequences.compactMap { $0 }
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "seq not strictly increasing: \(numbers)")
        #expect(numbers.dropFirst(atKill.lines.count).first == lastAtKill + 1, "the restart's first event follows the last archived one")
    }

    /// The limit the file-size test runs under: 8 blocks, which is 4 KiB or 8 KiB by the shell.
    static let sizeLimitBlocks = 8
    static let sizeLimitBytes = 8 * 1024

    /// Archive lines from an earlier run, more bytes in all than the file-size limit.
    static func earlierLines(count: Int) -> String {
        (0..<count).map { index in
            #"{"seq":\#(index + 1),"time":"2026-01-01T00:00:00.000Z","topic":"loader.todos.finished","sender":"loader.todos","event":{"pad":""#
                + String(repeating: "x", count: 200) + "\"}}\n"
        }.joined()
    }

    /// With no archive yet the file grows to the limit, and the line that would cross it is a
    /// short write, rolled back. With an archive already past the limit every write fails with
    /// EFBIG, and the kernel raises SIGXFSZ, which herald ignores.
    @Test(.timeLimit(.minutes(5)), .disabled(if: Sanitizers.thread, "the thread sanitizer's runtime dies of SIGBUS under a file-size cap"),
          arguments: [0, 40])
    func aFileSizeLimitIsAnErrorOnTheBusNotTheEndOfTheDaemon(earlierLineCount: Int) async throws {
        let herald = try #require(Self.herald)
        let (config, archive) = try directoryWithConfig()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let earlier = Self.earlierLines(count: earlierLineCount)
        if earlierLineCount > 0 {
            #expect(earlier.utf8.count > Self.sizeLimitBytes)
            try FileManager.default.createDirectory(at: archive.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(earlier.utf8).write(to: archive)
        }

        // Given a run whose files may not grow past the limit,
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                     ["-c", #"ulimit -f \#(Self.sizeLimitBlocks) && exec "$0" run --config "$1""#, herald.path, config.path])
        #expect(await child.waitForStandardError { $0.contains("herald: running 1 loader") }, "stderr: \(child.stderr)")
        #if os(Linux)
        // The kernel directs SIGXFSZ at the writing thread; the concurrency pool's threads happen
        // to block it, so this looks at the disposition itself.
        #expect(Self.ignoredSignals(of: child.pid).map { $0 & (1 << (SIGXFSZ - 1)) != 0 } == true,
                "herald ignores SIGXFSZ")
        #endif
        // when the archive is at the limit, the sink's failures are reported,
        let failedLine = "ERROR   bus.subscriber.failed  subscriber archive failed on "
        #expect(await child.waitForStandardError { $0.contains(failedLine) }, "stderr: \(child.stderr)")
        // and the daemon goes on loading and logging.
        let goesOn = await child.waitForStandardError { text in
            guard let failure = text.range(of: failedLine) else { return false }
            return text[failure.upperBound...].components(separatedBy: "INFO    loader.todos.finished").count > 20
        }
        #expect(goesOn, "stderr: \(child.stderr)")
        if earlierLineCount > 0 {
            #expect(child.stderr.contains("File too large"))
        }

        // Then SIGTERM stops it cleanly,
        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // The failure report of the last event may come after the drain ("herald: stopped
        // (1 events not delivered)"): the sink receives its own reports, and cannot write them.
        let lastLine = result.stderr.split(separator: "\n").last ?? ""
        #expect(result.stderr.contains("herald: stopping\n") && lastLine.hasPrefix("herald: stopped"),
                "stderr ends: \(result.stderr.suffix(600))")
        // and the archive holds only whole lines: the earlier ones, or new ones up to the limit.
        let contents = ArchiveContents(archive)
        #expect(contents.torn == nil)
        #expect(!contents.lines.isEmpty && !contents.sequences.contains(nil))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: archive.path)[.size] as? Int)
        if earlierLineCount > 0 {
            #expect(try String(contentsOf: archive, encoding: .utf8) == earlier)
        } else {
            #expect(size <= Self.sizeLimitBytes)
        }
    }

    #if os(Linux)
    /// The set of ignored signals of a process (`SigIgn` in `/proc/<pid>/status`), bit n-1 for
    /// signal n.
    static func ignoredSignals(of pid: Int32) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") })
        else { return nil }
        return UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }
    #endif
}
