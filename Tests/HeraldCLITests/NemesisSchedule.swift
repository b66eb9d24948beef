import Foundation
import HeraldSync
import HeraldTestSupport
import Testing

/// The operations and faults of a run, with their times, written out as JSON Lines when the
/// checker finds a violation: a line with the seed, one per operation, the history the checker
/// read, and its findings (the daemons' logs go to a file beside it).
final class NemesisJournal: Sendable {
    struct Entry: Codable, Sendable {
        var time: Date
        var op: String
        var target: String
    }

    let seed: UInt64?
    private let entries = SyncLock<[Entry]>([])

    init(seed: UInt64?) { self.seed = seed }

    func record(_ op: String, _ target: String) {
        entries.withLock { $0.append(Entry(time: Date(), op: op, target: target)) }
    }

    var operations: [Entry] { entries.withLock { $0 } }

    /// Appends one line to `nemesis-summary.jsonl` in the test output directory: the scenario,
    /// the seed, how long the faults ran, how many of each kind, and whether the run passed.
    static func appendSummary(scenario: String, seed: UInt64?, seconds: Int, servers: Int, faults: [String: Int], passed: Bool) throws {
        let directory = NemesisRig.outputDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        struct Line: Encodable {
            var time: Date, scenario: String, seed: String, seconds: Int, servers: Int, faults: [String: Int], passed: Bool
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let line = try encoder.encode(Line(time: Date(), scenario: scenario, seed: seed.map(String.init) ?? "none", seconds: seconds,
                                           servers: servers, faults: faults, passed: passed)) + Data("\n".utf8)
        let file = directory.appendingPathComponent("nemesis-summary.jsonl")
        if let handle = try? FileHandle(forWritingTo: file) {
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: line)
        } else {
            try line.write(to: file)
        }
    }

    /// Writes `nemesis-<name>[-<seed>].jsonl` (and `.log`) in the test output directory; its URL.
    func write(name: String, history: NemesisHistory, problems: [String], logs: [(node: String, log: String)]) throws -> URL {
        let directory = NemesisRig.outputDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let base = "nemesis-\(name)" + (seed.map { "-\($0)" } ?? "")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        var lines: [Data] = []
        lines.append(try encoder.encode(["seed": seed.map(String.init) ?? "none", "scenario": name]))
        for entry in operations { lines.append(try encoder.encode(entry)) }
        lines.append(try encoder.encode(["history": history]))
        lines.append(try encoder.encode(["problems": problems]))
        let file = directory.appendingPathComponent(base + ".jsonl")
        try Data(lines.map { $0 + Data("\n".utf8) }.joined()).write(to: file)
        let text = logs.map { "== \($0.node)\n\($0.log)" }.joined(separator: "\n")
        try Data(text.utf8).write(to: directory.appendingPathComponent(base + ".log"))
        return file
    }
}

/// Faults drawn from a seed, one at a time: each held for between half and twice the lease's
/// TTL, then undone, with a quiet gap (half to one and a half TTL) after it. The seed fixes the
/// kinds, targets and durations; half the daemon faults go to whichever node holds the todo
/// loader then, so a replay hits the same role, not always the same name.
struct NemesisSchedule {
    enum Fault: String, CaseIterable, Codable, Sendable {
        case pauseDaemon, killDaemon, blackholeDaemon, dropToServer, dropToClient, delayDaemon, resetDaemon
        case freezeServer, killServer, split
    }

    var generator: SeededGenerator
    let rig: NemesisRig
    let journal: NemesisJournal

    /// Isolates server `index` with the daemon that lists it first (its routes and that
    /// daemon's links to the other servers, and the other daemons' links to it), or heals it.
    /// Lets a fault last `duration` on the real clock. The one real-time wait of the nemesis, and
    /// not a wait for an outcome (those await conditions): the daemons' leases and the servers'
    /// elections run on real time in their own processes, so a fault that is to outlast a lease
    /// must last that long in real time; no test clock can stand in for it.
    static func keepFault(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }

    /// Lets a fault last until `end` on the real clock (see ``keepFault(for:)``).
    static func keepFault(until end: ContinuousClock.Instant) async throws {
        try await ContinuousClock().sleep(until: end)
    }

    static func split(_ rig: NemesisRig, isolating index: Int, _ mode: FaultProxy.Mode) {
        let server = "n\(index + 1)"
        for (name, proxy) in rig.routes where name.hasPrefix(server + "→") || name.hasSuffix("→" + server) { proxy.mode = mode }
        let alone = NemesisRig.nodes[index]
        for node in NemesisRig.nodes {
            for (position, proxy) in (rig.links[node] ?? []).enumerated() where (node == alone) != (position == index) {
                proxy.mode = mode
            }
        }
    }

    /// Runs faults until `seconds` passed; how many of each kind.
    mutating func run(for seconds: Int) async throws -> [Fault: Int] {
        let end = ContinuousClock.now + .seconds(seconds)
        let ttl = rig.leaseTTL
        var counts: [Fault: Int] = [:]
        let kinds = Fault.allCases.filter { rig.servers.count == 3 || $0 != .split }
        while ContinuousClock.now < end {
            let fault = kinds[Int(generator.next() % UInt64(kinds.count))]
            // Half the daemon faults hit the todo loader's holder (the node the lease bucket
            // names), as Jepsen aims at the primary; which node that is depends on timing.
            let drawn = Int(generator.next() % 6)
            let holder = await rig.leaseHolder("todos")
            let node = drawn < 3 ? NemesisRig.nodes[drawn] : holder ?? NemesisRig.nodes[drawn - 3]
            let server = Int(generator.next() % UInt64(rig.servers.count))
            let hold = ttl / 2 + ttl * (1.5 * Double(generator.next() % 1000) / 1000)
            let gap = ttl / 2 + ttl * (Double(generator.next() % 1000) / 1000)
            let delay = Duration.milliseconds(20 + Int(generator.next() % 280))
            counts[fault, default: 0] += 1
            switch fault {
            case .pauseDaemon:
                rig.pause(node)
                journal.record("pause", node)
                try await Self.keepFault(for: hold)
                rig.resume(node)
                journal.record("resume", node)
            case .killDaemon:
                await rig.kill9(node)
                journal.record("kill -9", node)
                try await Self.keepFault(for: hold)
                try rig.start(node)
                journal.record("start", node)
            case .blackholeDaemon, .dropToServer, .dropToClient, .delayDaemon:
                let mode: FaultProxy.Mode = switch fault {
                case .blackholeDaemon: .blackhole
                case .dropToServer: .dropToServer
                case .dropToClient: .dropToClient
                default: .delay(delay)
                }
                rig.cut(node, mode)
                journal.record(mode.description, node)
                try await Self.keepFault(for: hold)
                rig.cut(node, .pass)
                journal.record("pass", node)
            case .resetDaemon:
                for proxy in rig.links[node] ?? [] { proxy.resetAll() }
                journal.record("reset", node)
            case .freezeServer:
                rig.servers[server].freeze()
                journal.record("SIGSTOP", "n\(server + 1)")
                try await Self.keepFault(for: hold)
                rig.servers[server].thaw()
                journal.record("SIGCONT", "n\(server + 1)")
            case .killServer:
                await rig.servers[server].halt(crash: true)
                journal.record("kill -9", "n\(server + 1)")
                try await Self.keepFault(for: hold)
                try await rig.servers[server].restart()
                journal.record("start", "n\(server + 1)")
            case .split:
                Self.split(rig, isolating: server, .blackhole)
                journal.record("split", "n\(server + 1) with \(NemesisRig.nodes[server])")
                try await Self.keepFault(for: hold)
                Self.split(rig, isolating: server, .pass)
                journal.record("heal", "n\(server + 1)")
            }
            try await Self.keepFault(for: gap)  // the healed time between two faults, as long in real time
        }
        return counts
    }
}
