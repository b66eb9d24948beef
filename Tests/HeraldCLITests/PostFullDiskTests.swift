import Foundation
import HeraldTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald run` on a "full disk": a file-size limit of 0 (`ulimit -S -f 0`), so every write to
/// a file fails (EFBIG; herald ignores SIGXFSZ) while the pipes still work. Its todo loader
/// copies each new todo into a BaaS bucket; the bucket, in a `herald sandbox` process that
/// outlives the runs, is the judge: each todo is copied exactly once.
@Suite(.timeLimit(.minutes(5))) struct PostFullDiskTests {
    static let baas = #"{"url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}"#

    /// A `herald sandbox` process serving the BaaS service.
    struct BaaSSandbox {
        let process: ChildProcess
        let url: URL

        static func start(in directory: URL, herald: URL) async throws -> BaaSSandbox {
            let config = directory.appendingPathComponent("sandbox.json")
            try Data("""
                {"services": {"baas": \(PostFullDiskTests.baas)},
                 "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
                 "sandbox": {"port": 0}}
                """.utf8).write(to: config)
            let process = try ChildProcess(herald, ["sandbox", "--config", config.path])
            let listening = await process.waitForStandardOutput { $0.contains("sandbox listening on ") && $0.contains("\n") }
            #expect(listening, "sandbox stderr: \(process.stderr)")
            let line = try #require(process.stdout.split(separator: "\n").first { $0.hasPrefix("sandbox listening on ") })
            let url = try #require(URL(string: String(line.dropFirst("sandbox listening on ".count))))
            return BaaSSandbox(process: process, url: url)
        }

        /// Adds a todo to the `todos` bucket, as a user of the todo app would.
        func addTodo(_ description: String) async throws {
            var request = URLRequest(url: url.appendingPathComponent("1/demo/objects/todos"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("todo", forHTTPHeaderField: "X-Application-Id")
            request.setValue("sandbox", forHTTPHeaderField: "X-Application-Key")
            request.httpBody = try JSONSerialization.data(withJSONObject: ["description": description, "done": false])
            let (body, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 201, "\(String(decoding: body, as: UTF8.self))")
        }

        /// The `text` of every object in the `copies` bucket, oldest first.
        func copies() async throws -> [String] {
            let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("_sandbox/objects/copies"))
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            let objects = (object?["objects"] as? [[String: Any]]) ?? []
            return objects.compactMap { $0["text"] as? String }
        }

        func stop() async {
            process.signal(SIGTERM)
            _ = await process.finish(within: .seconds(30))
        }
    }

    static func daemonConfig(in directory: URL, sandbox: URL) throws -> URL {
        let config = directory.appendingPathComponent("config.json")
        try Data("""
            {"state": "var/state",
             "services": {"baas": {"url": "\(sandbox.absoluteString)", "tenant": "demo", "appId": "todo", "appKey": "sandbox"}},
             "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
             "subscribers": {
               "console": {"kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"},
               "posts": {"kind": "post", "retry": {"initial": "50ms", "max": "200ms"},
                         "rules": {"copy": {"on": "loader.todos.finished", "for": "new", "service": "baas", "bucket": "copies",
                                            "fields": {"text": "{{description}}"}}}}
             }}
            """.utf8).write(to: config)
        return config
    }

    /// `herald run`, with a soft file-size limit of 0 when `full` (the hard limit stays, so the
    /// test may lift it from outside with prlimit(2)).
    static func run(_ herald: URL, config: URL, full: Bool) throws -> ChildProcess {
        guard full else { return try ChildProcess(herald, ["run", "--config", config.path]) }
        return try ChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                ["-c", #"ulimit -S -f 0 && exec "$0" "$@""#, herald.path, "run", "--config", config.path])
    }

    /// Sets another process's file-size limit to unlimited with prlimit(2), which Glibc's
    /// module map does not export (it needs _GNU_SOURCE), so it is looked up by name.
    static func liftFileSizeLimit(of pid: pid_t) -> Bool {
        typealias Prlimit = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
        guard let symbol = dlsym(nil, "prlimit") else { return false }
        let prlimit = unsafeBitCast(symbol, to: Prlimit.self)
        var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)  // RLIM_INFINITY
        return prlimit(pid, Int32(RLIMIT_FSIZE.rawValue), &unlimited, nil) == 0
    }

    static func count(_ topic: String, in stderr: String) -> Int {
        stderr.split(separator: "\n").filter { $0.contains(topic) }.count
    }

    @Test(.disabled(if: Sanitizers.thread, "the thread sanitizer's runtime dies of SIGBUS under a file-size cap"))
    func postsHeldOnAFullDiskAreMadeExactlyOnceWhenItHasRoomAndAcrossRestarts() async throws {
        let herald = try #require(PostCommandTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await BaaSSandbox.start(in: directory, herald: herald)
        for text in ["buy milk", "call mom", "water plants"] { try await sandbox.addTodo(text) }
        let config = try Self.daemonConfig(in: directory, sandbox: sandbox.url)

        // 1. Full all along, stopped while holding: nothing is copied, nothing is recorded.
        let first = try Self.run(herald, config: config, full: true)
        let held = await first.waitForStandardError { Self.count("post.copy.held", in: $0) >= 3 }
        #expect(held, "stderr: \(first.stderr)")
        #expect(try await sandbox.copies().isEmpty, "sent before it was recorded")
        first.signal(SIGTERM)
        let stoppedFirst = try #require(await first.finish())
        #expect(stoppedFirst.status == 0, "stderr: \(stoppedFirst.stderr)")
        #expect(Self.count("post.copy.sent", in: stoppedFirst.stderr) == 0)
        #expect(try await sandbox.copies().isEmpty)

        // 2. Full at first (the loader's state is not saved either, so the todos come again),
        // then the limit is lifted: each held post is recorded, then sent.
        let second = try Self.run(herald, config: config, full: true)
        let heldAgain = await second.waitForStandardError { Self.count("post.copy.held", in: $0) >= 3 }
        #expect(heldAgain, "stderr: \(second.stderr)")
        #expect(try await sandbox.copies().isEmpty)
        #expect(Self.liftFileSizeLimit(of: second.pid), "prlimit: \(String(cString: strerror(errno)))")
        let sent = await second.waitForStandardError { Self.count("post.copy.sent", in: $0) >= 3 }
        #expect(sent, "stderr: \(second.stderr)")
        second.signal(SIGTERM)
        let stoppedSecond = try #require(await second.finish())
        #expect(stoppedSecond.status == 0)
        #expect(Self.count("post.copy.recorded", in: stoppedSecond.stderr) == 3, "stderr: \(stoppedSecond.stderr)")
        #expect(try await sandbox.copies().sorted() == ["buy milk", "call mom", "water plants"])

        // 3. A restart with room: the loader announces the three again (its state was never
        // saved) and a new one; the outbox knows the three, so only the new one is copied.
        // Posts go in order, so a repeat would have come before it.
        try await sandbox.addTodo("feed cat")
        let third = try Self.run(herald, config: config, full: false)
        let sentNew = await third.waitForStandardError { Self.count("post.copy.sent", in: $0) >= 1 }
        #expect(sentNew, "stderr: \(third.stderr)")
        third.signal(SIGTERM)
        let stoppedThird = try #require(await third.finish())
        #expect(stoppedThird.status == 0)
        #expect(Self.count("post.copy.sent", in: stoppedThird.stderr) == 1, "stderr: \(stoppedThird.stderr)")
        #expect(try await sandbox.copies().sorted() == ["buy milk", "call mom", "feed cat", "water plants"])
        await sandbox.stop()
    }
}
