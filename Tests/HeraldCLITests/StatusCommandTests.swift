import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald status` as a real child process, against a real `herald run`.
@Suite struct StatusCommandTests {
    static let herald = BuiltProducts.url(of: "herald")

    /// A port the kernel just gave out and nothing holds (a loopback listener closed at once).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(.timeLimit(.minutes(5)))
    func statusPrintsTheLoadersOfARunningDaemonByConfigAndByURL() async throws {
        let herald = try #require(Self.herald)
        let config = try RunCommandTests().freshDemo()
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let shipped = try String(contentsOf: config, encoding: .utf8)
        // The port must be written in the config (status reads it from there); another process
        // may take a free port before the daemon binds it, so a port in use is tried again.
        var port = 0
        var running: ChildProcess?
        for _ in 0..<10 {
            port = try Self.freePort()
            try Data(shipped.replacingOccurrences(of: #""listen": "127.0.0.1:0""#, with: #""listen": "127.0.0.1:\#(port)""#).utf8).write(to: config)
            let started = try ChildProcess(herald, ["run", "--config", config.path])
            let up = await started.waitForStandardError { $0.contains("herald: status at ") || $0.contains("Address already in use") }
            if up, started.stderr.contains("herald: status at ") {
                running = started
                break
            }
            _ = await started.finish(within: .seconds(300))
        }
        let daemon = try #require(running, "no free port could be bound")
        #expect(await daemon.waitForStandardError { RunCommandTests.loggedAllLoaders($0) })
        #expect(daemon.stderr.contains("herald: status at http://127.0.0.1:\(port)/"))

        for arguments in [["status", "--config", config.path], ["status", "--url", "http://127.0.0.1:\(port)"]] {
            let result = try #require(try await ChildProcess.run(herald, arguments))
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("herald at http://127.0.0.1:\(port)/: ready, ") == true, "\(lines)")
            // Then the configuration running: its file, hash, load time and reloads.
            let configLine = try #require(lines.dropFirst().first)
            #expect(configLine.hasPrefix("config \(config.path) sha1 ") && configLine.hasSuffix(", 0 reloads"), "\(configLine)")
            let header = try #require(lines.dropFirst(2).first)
            #expect(header.hasPrefix("LOADER"))
            #expect(["KIND", "STATE", "LAST RUN", "RESULT", "NEXT RUN", "PULLS", "NEW"].allSatisfy(header.contains))
            for (loader, kind) in [("home", "timeline"), ("images", "tiqav"), ("itmedia", "timeline"), ("todos", "todo")] {
                let row = try #require(lines.first { $0.hasPrefix(loader + " ") }, "no row for \(loader) in \(lines)")
                #expect(row.contains(" \(kind) "))
            }
            #expect(lines.contains { $0.hasPrefix("outbox posts: ") })
        }

        daemon.signal(SIGTERM)
        #expect(try #require(await daemon.finish()).status == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func withNothingListeningStatusExits1SayingWhere() async throws {
        let herald = try #require(Self.herald)
        let port = try Self.freePort()
        let result = try #require(try await ChildProcess.run(herald, ["status", "--url", "http://127.0.0.1:\(port)/"]))
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("herald: cannot reach the status endpoint at http://127.0.0.1:\(port)/: "), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// (arguments, the one line on standard error); every one exits 2.
    @Test(.timeLimit(.minutes(5)), arguments: [
        (["status", "--url", "ftp://x"], #"herald: --url: "ftp://x" is not an http URL (http://127.0.0.1:8420)"#),
        (["status", "--url", "http://x", "--config", "c.json"], "herald: status takes --url or --config, not both"),
        (["status", "--bogus"], "herald: unknown option '--bogus' for 'status' (see 'herald status --help')"),
        (["status", "--url"], "herald: --url needs a value"),
    ])
    func badArgumentsAreOneLineAndExit2(arguments: [String], message: String) async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, arguments))
        #expect(result.status == 2)
        #expect(result.stderr == message + "\n")
    }

    @Test(.timeLimit(.minutes(5)))
    func aConfigWithoutAFixedPortCannotBeAsked() async throws {
        let herald = try #require(Self.herald)
        let config = try RunCommandTests().freshDemo()  // listens on port 0
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["status", "--config", config.path]))
        #expect(result.status == 2)
        #expect(result.stderr.contains("listens on port 0 (any free port); pass the URL 'herald run' printed with --url"))
    }

    @Test func helpDescribesTheCommand() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, ["status", "--help"]))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("USAGE: herald status [--url URL | --config PATH]"))
        let general = try #require(try await ChildProcess.run(herald, ["--help"]))
        #expect(general.stdout.contains("status             show a running daemon's loaders and outbox"))
    }
}
