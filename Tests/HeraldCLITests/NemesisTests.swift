import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The cluster under a nemesis: three `herald run` daemons, one sandbox, one or three real
/// nats-servers, with fault proxies between each daemon and each server and on the servers'
/// routes. Each scenario ends with ``NemesisChecker`` over what the run left: every todo posted
/// once, no loader state going backwards, loads only within Cluster.md's boundary, every stream
/// message stored once, every daemon exiting 0 on SIGTERM.
///
/// Serialized, and one suite: these tests start seven to ten processes on a shared machine.
/// They run when `HERALD_NEMESIS=1`, by hand and on a machine of their own: inside the parallel
/// suite on two cores the split test waited out its limit once, and on its own the cut-off test
/// failed once (its idea of the holder went stale between two faults), so they are not in CI yet.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"),
       .enabled(if: ProcessInfo.processInfo.environment["HERALD_NEMESIS"] == "1", "the nemesis runs with HERALD_NEMESIS=1"))
struct NemesisTests {
    static let herald = BuiltProducts.url(of: "herald")
    /// Short, so a takeover takes seconds; renewals every second. Under the thread sanitizer
    /// (daemons several times slower) 10 s, so a loaded machine does not move leases all the time.
    static let leaseTTL = Duration.seconds(Sanitizers.thread ? 10 : 3)

    static func finished(_ loader: String) -> String { "herald.loader.\(loader).finished" }

    /// Runs `body` on a fresh rig, then heals, waits until every todo present is posted, stops
    /// the daemons and checks the history; on a violation the operations and the history are
    /// written out.
    func run(servers: Int, name: String, seed: UInt64? = nil, _ body: (NemesisRig, NemesisJournal) async throws -> Void) async throws {
        let herald = try #require(Self.herald)
        let rig = try await NemesisRig(herald: herald, servers: servers, leaseTTL: Self.leaseTTL)
        let journal = NemesisJournal(seed: seed)
        do {
            guard await rig.waitUntilRunning() else { throw NemesisFailure.didNotStart }
            rig.states.start()
            // Steady: each loader announced twice.
            await rig.watcher.wait { events in
                ["todos", "itmedia"].allSatisfy { loader in events.filter { $0.subject == Self.finished(loader) }.count >= 2 }
            }
            try await body(rig, journal)
            journal.record("heal", "all")
            let healed = Date()
            // Converged: each loader announced twice more, every todo present now posted.
            await rig.watcher.wait { events in
                ["todos", "itmedia"].allSatisfy { loader in events.filter { $0.subject == Self.finished(loader) && $0.time > healed }.count >= 2 }
            }
            let expected = try await rig.todoTexts()
            let posted = try await rig.waitUntilPosted(expected)
            #expect(posted, "not every todo was posted after healing")
            let exits = await rig.stopDaemons()
            let history = try await rig.history(exits: exits, expected: expected)
            let problems = NemesisChecker.check(history)
            // The checker read something: a vacuous history passes every predicate.
            #expect(!history.saves.isEmpty && !history.loads.isEmpty && !history.sends.isEmpty && !history.posts.isEmpty)
            print("nemesis \(name): \(history.loads.count) loads, \(history.tenures.count) lease takes, \(history.saves.count) states saved, "
                  + "\(history.posts.count) posts (\(history.sends.filter(\.duplicate).count) duplicates recognised), \(history.storedIDs.count) stream messages; "
                  + journal.operations.map { "\($0.op) \($0.target)" }.joined(separator: ", "))
            #expect(problems.isEmpty, "\(name): \(problems.joined(separator: "\n"))")
            if !problems.isEmpty || !posted || ProcessInfo.processInfo.environment["HERALD_NEMESIS_KEEP"] == "1" {
                let file = try journal.write(name: name, history: history, problems: problems, logs: rig.logs)
                if !problems.isEmpty || !posted { Issue.record("\(name): the history is in \(file.path)\(seed.map { "; replay with HERALD_NEMESIS_SEED=\($0)" } ?? "")") }
            }
        } catch {
            await rig.tearDown()
            throw error
        }
        await rig.tearDown()
    }

    /// The node that announced the todo loader's last load.
    static func holder(_ rig: NemesisRig) throws -> String {
        try #require(rig.watcher.events.last { $0.subject == finished("todos") }?.node)
    }

    /// Waits until a node other than `node` announces a todo load after `since`; that node.
    @discardableResult
    static func takeover(from node: String, since: Date, _ rig: NemesisRig) async -> String? {
        await rig.watcher.wait { $0.contains { $0.subject == finished("todos") && $0.node != node && $0.time > since } }
        return rig.watcher.events.last { $0.subject == finished("todos") && $0.node != node && $0.time > since }?.node
    }

    @Test(.timeLimit(.minutes(10))) func aHolderPausedForTwiceTheLeaseTTLOverwritesNoStatePostsNothingTwiceAndRejoinsAsAFollower() async throws {
        try await run(servers: 1, name: "pause") { rig, journal in
            let holder = try Self.holder(rig)
            let paused = ContinuousClock.now
            let pausedAt = Date()
            rig.pause(holder)
            journal.record("pause", holder)
            // The pause lasts until another node loads and a todo is posted meanwhile, and at least 2 × the TTL.
            let successor = await Self.takeover(from: holder, since: pausedAt, rig)
            await rig.watcher.wait { $0.contains { $0.subject == "herald.post.todo-tweet.sent" && $0.node != holder && $0.time > pausedAt } }
            try await ContinuousClock().sleep(until: paused + Self.leaseTTL * 2)
            rig.resume(holder)
            let resumedAt = Date()
            journal.record("resume", holder)
            let lost = await rig.daemon(holder)?.waitForStandardError { $0.contains("cluster.lease.todos.lost") }
            #expect(lost == true, "the paused node never said it lost the lease: \(rig.log(holder))")
            // It rejoins as a follower: the successor goes on loading, three times more.
            await rig.watcher.wait { $0.filter { $0.subject == Self.finished("todos") && $0.time > resumedAt }.count >= 3 }
            #expect(successor != nil && successor != holder)
        }
    }

    /// The holder paused while its request for the todos is in flight (the sandbox answers it
    /// a lease's TTL late): when it resumes the answer is waiting, and it must not announce it,
    /// for another node holds the loader by then.
    @Test(.timeLimit(.minutes(10))) func aHolderPausedWithItsRequestToTheServiceInFlightAnnouncesNothingOnceItResumes() async throws {
        try await run(servers: 1, name: "pause-mid-load") { rig, journal in
            let holder = try Self.holder(rig)
            try await rig.script("/1/demo/objects/todos", #"[{"delay": \#(Self.leaseTTL.components.seconds)}]"#)
            // Its request is in flight once the script is used up (looked at on each stream message).
            while try await rig.scriptedLeft() > 0 { await rig.watcher.next() }
            let paused = ContinuousClock.now
            let pausedAt = Date()
            rig.pause(holder)
            journal.record("pause mid-load", holder)
            await Self.takeover(from: holder, since: pausedAt, rig)
            try await ContinuousClock().sleep(until: paused + Self.leaseTTL * 2)
            rig.resume(holder)
            let resumedAt = Date()
            journal.record("resume", holder)
            let lost = await rig.daemon(holder)?.waitForStandardError { $0.contains("cluster.lease.todos.lost") }
            #expect(lost == true, "the paused node never said it lost the lease: \(rig.log(holder))")
            await rig.watcher.wait { $0.filter { $0.subject == Self.finished("todos") && $0.time > resumedAt }.count >= 3 }
            let late = rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.node == holder && $0.time > pausedAt }
            #expect(late.isEmpty || rig.lastAcquired("todos") == holder, "\(holder) announced \(late.map(\.newItems)) after its lease ended")
        }
    }

    @Test(.timeLimit(.minutes(10))) func aHolderCutOffFromNATSBothWaysThenOneWayStopsLoadingAndAnotherTakesOverPostingNothingTwice() async throws {
        try await run(servers: 1, name: "cut-off") { rig, journal in
            for mode in [FaultProxy.Mode.blackhole, .dropToServer, .dropToClient] {
                let holder = try Self.holder(rig)
                let reconnects = Self.count("cluster.connection.reconnected", in: rig.log(holder))
                let losses = Self.count("cluster.lease.todos.lost", in: rig.log(holder))
                let cutAt = Date()
                rig.cut(holder, mode)
                journal.record(mode.description, holder)
                let successor = await Self.takeover(from: holder, since: cutAt, rig)
                #expect(successor != nil)
                rig.cut(holder, .pass)
                journal.record("pass", holder)
                // It said it lost the loader, and it is back once it reconnected.
                let back = await rig.daemon(holder)?.waitForStandardError { log in
                    Self.count("cluster.lease.todos.lost", in: log) > losses && Self.count("cluster.connection.reconnected", in: log) > reconnects
                }
                #expect(back == true, "\(holder) did not lose the lease and reconnect (\(mode)): \(rig.log(holder))")
            }
        }
    }

    static func count(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    @Test(.timeLimit(.minutes(10))) func aSlowNetworkDelayingEveryFrameMakesAcksLateButLosesAndDoublesNothing() async throws {
        try await run(servers: 1, name: "slow") { rig, journal in
            let delay = Self.leaseTTL / 10
            for node in NemesisRig.nodes { rig.cut(node, .delay(delay)) }
            journal.record("delay \(delay)", "all")
            let slowSince = Date()
            // Five loads and three posts over the slow links.
            await rig.watcher.wait { events in
                events.filter { $0.subject == Self.finished("todos") && $0.time > slowSince }.count >= 5
                    && events.filter { $0.subject == "herald.post.todo-tweet.sent" && $0.time > slowSince }.count >= 3
            }
            for node in NemesisRig.nodes { rig.cut(node, .pass) }
        }
    }

    @Test(.timeLimit(.minutes(10))) func aThreeServerClusterSplitTwoToOneKeepsEveryGuaranteeOnTheMinoritySideAndConvergesAfterHealing() async throws {
        try await run(servers: 3, name: "split") { rig, journal in
            let holder = try Self.holder(rig)
            let splitAt = Date()
            NemesisSchedule.split(rig, isolating: 2, .blackhole)
            journal.record("split", "n3 with c | n1 n2 with a b")
            // Every route goes through its proxy (nothing bypasses the split).
            #expect(rig.routes.values.allSatisfy { $0.accepted > 0 }, "\(rig.routes.mapValues(\.accepted))")
            // The majority side goes on: three todo loads by a or b.
            await rig.watcher.wait { $0.filter { $0.subject == Self.finished("todos") && $0.node != "c" && $0.time > splitAt }.count >= 3 }
            if holder == "c" {
                // On the minority side, c cannot renew: it says it lost the lease.
                let lost = await rig.daemon("c")?.waitForStandardError { $0.contains("cluster.lease.todos.lost") }
                #expect(lost == true, "c kept the lease on the minority side: \(rig.log("c"))")
            }
            NemesisSchedule.split(rig, isolating: 2, .pass)
        }
    }

    /// Jepsen's shape, small: faults drawn from a seed (printed; `HERALD_NEMESIS_SEED` replays
    /// it) for 60 s (`HERALD_NEMESIS_SECONDS`) while the sandbox adds todos, then the checker.
    // As long as HERALD_NEMESIS_SECONDS asks, plus the end's convergence.
    @Test(.timeLimit(.minutes(180))) func aRandomScheduleOfFaultsDrawnFromASeedBreaksNoGuarantee() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["HERALD_NEMESIS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        let seconds = environment["HERALD_NEMESIS_SECONDS"].flatMap { Int($0) } ?? 60
        let servers = environment["HERALD_NEMESIS_SERVERS"] == "1" ? 1 : 3
        print("nemesis: seed \(seed), \(seconds) s, \(servers) server(s) (HERALD_NEMESIS_SEED=\(seed) replays the schedule)")
        var counts: [NemesisSchedule.Fault: Int] = [:]
        try await run(servers: servers, name: "random", seed: seed) { rig, journal in
            var schedule = NemesisSchedule(generator: SeededGenerator(seed: seed), rig: rig, journal: journal)
            counts = try await schedule.run(for: seconds)
        }
        let survived = counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        print("nemesis: seed \(seed): faults: \(survived)")
        #expect(!counts.isEmpty)
    }
}

enum NemesisFailure: Error {
    case didNotStart
}
