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
/// They run when `HERALD_NEMESIS=1`, in a CI step of their own (`.ci/run`), never inside the
/// parallel suite. Every wait awaits a condition (the lease bucket and the daemons' logs are
/// read again before each fault) and ends, with what it waited for, when a daemon exits or
/// its hang guard runs out; only a fault's own hold lasts a set time.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"),
       .enabled(if: ProcessInfo.processInfo.environment["HERALD_NEMESIS"] == "1", "the nemesis runs with HERALD_NEMESIS=1"))
struct NemesisTests {
    static let herald = BuiltProducts.url(of: "herald")
    /// Short, so a takeover takes seconds; renewals every second. Under the thread sanitizer
    /// (daemons several times slower) 10 s, so a loaded machine does not move leases all the time.
    static let leaseTTL = Duration.seconds(Sanitizers.thread ? 10 : 3)

    static func finished(_ loader: String) -> String { "herald.loader.\(loader).finished" }

    static let lost = "cluster.lease.todos.lost"
    static let reconnected = "cluster.connection.reconnected"
    static let posted = "herald.post.todo-tweet.sent"

    /// Runs `body` on a fresh rig, then heals, waits until every todo present is posted, stops
    /// the daemons and checks the history; on a violation (or a wait that ran into its hang
    /// guard) the operations and the history are written out. Every wait awaits a condition;
    /// each ends with a ``NemesisFailure`` naming it when a daemon exits or its guard runs out.
    /// Whether the run kept every guarantee.
    @discardableResult
    func run(servers: Int, name: String, seed: UInt64? = nil,
             _ body: (NemesisRig, NemesisJournal) async throws -> Void) async throws -> Bool {
        let herald = try #require(Self.herald)
        let rig = try await NemesisRig(herald: herald, servers: servers, leaseTTL: Self.leaseTTL)
        let journal = NemesisJournal(seed: seed)
        var passed = false
        do {
            guard await rig.waitUntilRunning() else { throw NemesisFailure(message: "a daemon did not start") }
            rig.states.start()
            try await rig.until("each loader announced twice") {
                ["todos", "itmedia"].allSatisfy { loader in rig.watcher.events.filter { $0.subject == Self.finished(loader) }.count >= 2 }
            }
            try await body(rig, journal)
            rig.healAll()
            journal.record("heal", "all")
            let healed = Date()
            try await rig.until("each loader announced twice after healing") {
                ["todos", "itmedia"].allSatisfy { loader in rig.watcher.events.filter { $0.subject == Self.finished(loader) && $0.time > healed }.count >= 2 }
            }
            let expected = try await rig.todoTexts()
            try await rig.waitUntilPosted(expected)
            let exits = await rig.stopDaemons()
            let history = try await rig.history(exits: exits, expected: expected)
            let problems = NemesisChecker.check(history)
            // The checker read something: a vacuous history passes every predicate.
            #expect(!history.saves.isEmpty && !history.loads.isEmpty && !history.sends.isEmpty && !history.posts.isEmpty)
            print("nemesis \(name): \(history.loads.count) loads, \(history.tenures.count) lease takes, \(history.saves.count) states saved, "
                  + "\(history.posts.count) posts (\(history.sends.filter(\.duplicate).count) duplicates recognised), \(history.storedIDs.count) stream messages; "
                  + journal.operations.map { "\($0.op) \($0.target)" }.joined(separator: ", "))
            #expect(problems.isEmpty, "\(name): \(problems.joined(separator: "\n"))")
            passed = problems.isEmpty
            if !problems.isEmpty || ProcessInfo.processInfo.environment["HERALD_NEMESIS_KEEP"] == "1" {
                let file = try journal.write(name: name, history: history, problems: problems, logs: rig.logs)
                if !problems.isEmpty { Issue.record("\(name): the history is in \(file.path)\(seed.map { "; replay with HERALD_NEMESIS_SEED=\($0)" } ?? "")") }
            }
        } catch {
            // What the run did until then, for the failure's reader.
            let file = try? journal.write(name: name, history: NemesisHistory(), problems: ["\(error)"], logs: rig.logs)
            await rig.tearDown()
            Issue.record("\(name): \(error)\(file.map { "; the operations and logs are in \($0.path)" } ?? "")")
            return false
        }
        await rig.tearDown()
        return passed
    }

    static func count(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    /// A daemon's log now (empty when it does not run).
    static func log(_ node: String, _ rig: NemesisRig) -> String { rig.daemon(node)?.stderr ?? "" }

    @Test(.timeLimit(.minutes(10))) func aHolderPausedForTwiceTheLeaseTTLOverwritesNoStatePostsNothingTwiceAndRejoinsAsAFollower() async throws {
        try await run(servers: 1, name: "pause") { rig, journal in
            let (holder, log) = try await rig.settledHolder()
            let losses = Self.count(Self.lost, in: log)
            let paused = ContinuousClock.now
            let pausedAt = Date()
            rig.pause(holder)
            journal.record("pause", holder)
            // The pause lasts until another node loads and a todo is posted meanwhile, and at least 2 × the TTL.
            _ = try await rig.settledHolder(other: holder, since: pausedAt)
            try await rig.until("a todo posted by a node other than the paused \(holder)") {
                rig.watcher.events.contains { $0.subject == Self.posted && $0.node != holder && $0.time > pausedAt }
            }
            try await NemesisSchedule.keepFault(until: paused + Self.leaseTTL * 2)
            rig.resume(holder)
            let resumedAt = Date()
            journal.record("resume", holder)
            try await rig.until("the resumed \(holder) saying it lost the lease") { Self.count(Self.lost, in: Self.log(holder, rig)) > losses }
            // It rejoins as a follower: the cluster goes on loading, three times more.
            try await rig.until("three todo loads after \(holder) resumed") {
                rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.time > resumedAt }.count >= 3
            }
        }
    }

    /// The holder paused while its request for the todos is in flight (the sandbox answers it
    /// a lease's TTL late): when it resumes the answer is waiting, and it must not announce it,
    /// for another node holds the loader by then.
    @Test(.timeLimit(.minutes(10))) func aHolderPausedWithItsRequestToTheServiceInFlightAnnouncesNothingOnceItResumes() async throws {
        try await run(servers: 1, name: "pause-mid-load") { rig, journal in
            var target: (node: String, log: String)?
            // The delayed answer must be the holder's: a request made while the lease moved is tried again.
            for _ in 0..<5 where target == nil {
                let (holder, log) = try await rig.settledHolder()
                let tenure = NemesisRig.holdingSince("todos", in: log)
                try await rig.script("/1/demo/objects/todos", #"[{"delay": \#(Self.leaseTTL.components.seconds)}]"#)
                try await rig.until("the sandbox's delayed answer taken by a request") { try await rig.scriptedLeft() == 0 }
                if await rig.leaseHolder("todos") == holder, NemesisRig.holdingSince("todos", in: Self.log(holder, rig)) == tenure {
                    target = (holder, Self.log(holder, rig))
                }
            }
            let (holder, log) = try #require(target, "the lease moved while each of five delayed requests was out")
            let losses = Self.count(Self.lost, in: log)
            let paused = ContinuousClock.now
            let pausedAt = Date()
            rig.pause(holder)
            journal.record("pause mid-load", holder)
            _ = try await rig.settledHolder(other: holder, since: pausedAt)
            try await NemesisSchedule.keepFault(until: paused + Self.leaseTTL * 2)
            rig.resume(holder)
            let resumedAt = Date()
            journal.record("resume", holder)
            try await rig.until("the resumed \(holder) saying it lost the lease") { Self.count(Self.lost, in: Self.log(holder, rig)) > losses }
            try await rig.until("three todo loads after \(holder) resumed") {
                rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.time > resumedAt }.count >= 3
            }
            let late = rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.node == holder && $0.time > pausedAt }
            #expect(late.isEmpty || rig.lastAcquired("todos") == holder, "\(holder) announced \(late.map(\.newItems)) after its lease ended")
        }
    }

    /// Before each fault the holder is read again (the bucket and that node's log agree): a
    /// holder taken from the last announcement went stale once between two faults, when the
    /// previous holder's late events arrived after its successor's.
    @Test(.timeLimit(.minutes(10))) func aHolderCutOffFromNATSBothWaysThenOneWayStopsLoadingAndAnotherTakesOverPostingNothingTwice() async throws {
        try await run(servers: 1, name: "cut-off") { rig, journal in
            for mode in [FaultProxy.Mode.blackhole, .dropToServer, .dropToClient] {
                let (holder, log) = try await rig.settledHolder()
                let reconnects = Self.count(Self.reconnected, in: log)
                let losses = Self.count(Self.lost, in: log)
                let cutAt = Date()
                rig.cut(holder, mode)
                journal.record(mode.description, holder)
                _ = try await rig.settledHolder(other: holder, since: cutAt)
                rig.cut(holder, .pass)
                journal.record("pass", holder)
                // It said it lost the loader, and it is back once it reconnected.
                try await rig.until("\(holder) losing the lease and reconnecting (\(mode))") {
                    let log = Self.log(holder, rig)
                    return Self.count(Self.lost, in: log) > losses && Self.count(Self.reconnected, in: log) > reconnects
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(10))) func aSlowNetworkDelayingEveryFrameMakesAcksLateButLosesAndDoublesNothing() async throws {
        try await run(servers: 1, name: "slow") { rig, journal in
            let delay = Self.leaseTTL / 10
            for node in NemesisRig.nodes { rig.cut(node, .delay(delay)) }
            journal.record("delay \(delay)", "all")
            let slowSince = Date()
            try await rig.until("five todo loads and three posts over the slow links") {
                rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.time > slowSince }.count >= 5
                    && rig.watcher.events.filter { $0.subject == Self.posted && $0.time > slowSince }.count >= 3
            }
            for node in NemesisRig.nodes { rig.cut(node, .pass) }
        }
    }

    @Test(.timeLimit(.minutes(10))) func aThreeServerClusterSplitTwoToOneKeepsEveryGuaranteeOnTheMinoritySideAndConvergesAfterHealing() async throws {
        try await run(servers: 3, name: "split") { rig, journal in
            let (holder, log) = try await rig.settledHolder()
            let losses = Self.count(Self.lost, in: log)
            let splitAt = Date()
            NemesisSchedule.split(rig, isolating: 2, .blackhole)
            journal.record("split", "n3 with c | n1 n2 with a b")
            // Every route goes through its proxy (nothing bypasses the split).
            #expect(rig.routes.values.allSatisfy { $0.accepted > 0 }, "\(rig.routes.mapValues(\.accepted))")
            try await rig.until("three todo loads by a or b on the majority side") {
                rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.node != "c" && $0.time > splitAt }.count >= 3
            }
            if holder == "c" {
                // On the minority side, c cannot renew: it says it lost the lease.
                try await rig.until("c, the holder on the minority side, saying it lost the lease") { Self.count(Self.lost, in: Self.log("c", rig)) > losses }
            }
            NemesisSchedule.split(rig, isolating: 2, .pass)
        }
    }

    // MARK: Bad input

    /// Every daemon's connection is reset inside a frame (the last byte it gets is never a line
    /// end) after 8 to 12 KB towards it, again and again: the client drops the torn frame,
    /// reconnects and retries with the same ids, and the cluster goes on posting.
    @Test(.timeLimit(.minutes(10))) func aProxyResettingEachConnectionInsideAFrameLosesAndDoublesNothing() async throws {
        try await run(servers: 1, name: "reset-inside-frame") { rig, journal in
            let since = Date()
            for (index, node) in NemesisRig.nodes.enumerated() { rig.cut(node, .resetAfter(bytes: 8192 + 2048 * index)) }
            journal.record("reset inside a frame after 8-12 KB", "all")
            try await rig.until("every node's connection reset inside a frame twice, and a todo posted since") {
                NemesisRig.nodes.allSatisfy { node in (rig.links[node] ?? []).reduce(0) { $0 + $1.cutsInsideFrames } >= 2 }
                    && rig.watcher.events.contains { $0.subject == Self.posted && $0.time > since }
            }
            for node in NemesisRig.nodes { rig.cut(node, .pass) }
        }
    }

    /// The holder's proxy passes the first half of a publish's ack (`{"stream":"HERALD"` cut in
    /// two) and holds the rest; then the server stops (SIGSTOP) for twice the lease's TTL. The
    /// node drops the connection with half a frame read (its pings go unanswered), and after
    /// the server runs again it reconnects; the publish is retried with its id and stored once.
    @Test(.timeLimit(.minutes(10))) func aServerPausedWhileTheNodeHoldsHalfAnAckStoresAndPostsEverythingOnce() async throws {
        try await run(servers: 1, name: "half-ack") { rig, journal in
            let (holder, log) = try await rig.settledHolder()
            let reconnects = Self.count(Self.reconnected, in: log)
            let proxy = try #require(rig.links[holder]?.first)
            rig.cut(holder, .holdInside(marker: #"{"stream":"HERALD""#))
            journal.record("hold the rest of an ack", holder)
            try await rig.until("\(holder) given half of a publish's ack") { proxy.holds > 0 }
            rig.servers[0].freeze()
            journal.record("SIGSTOP", "n1")
            try await NemesisSchedule.keepFault(for: Self.leaseTTL * 2)
            rig.servers[0].thaw()
            journal.record("SIGCONT", "n1")
            rig.cut(holder, .pass)
            journal.record("pass", holder)
            try await rig.until("\(holder) reconnecting after the server ran again") { Self.count(Self.reconnected, in: Self.log(holder, rig)) > reconnects }
        }
    }

    /// The holder is cut off (blackholed), and meanwhile its import consumer and the shared post
    /// consumer are deleted through the JetStream API. The other nodes make the post consumer
    /// again and go on posting; the cut-off node, once it reconnects, makes its import consumer
    /// again from where it stopped: it imports every event the others stored meanwhile, once.
    @Test(.timeLimit(.minutes(10))) func aConsumerDeletedDuringAPartitionIsMadeAgainAndNothingIsLostOrDoubled() async throws {
        try await run(servers: 1, name: "consumer-deleted") { rig, journal in
            let (node, _) = try await rig.settledHolder()
            let importConsumer = "herald-import-\(node)"
            let cutAt = Date()
            rig.cut(node, .blackhole)
            journal.record("blackhole", node)
            let js = rig.watcher.connection.jetStream(timeout: .seconds(5))
            try await rig.deleteConsumer(stream: "HERALD", consumer: importConsumer)
            try await rig.deleteConsumer(stream: "HERALD_POSTS", consumer: "herald-posters")
            journal.record("delete the consumers \(importConsumer) and herald-posters", "n1")
            let deletedAt = Date()
            _ = try await rig.settledHolder(other: node, since: deletedAt)
            try await rig.until("a todo posted after the consumers were deleted") {
                rig.watcher.events.contains { $0.subject == Self.posted && $0.time > deletedAt }
            }
            try await rig.until("herald-posters made again") { (try? await js.consumerInfo(stream: "HERALD_POSTS", consumer: "herald-posters")) != nil }
            rig.cut(node, .pass)
            journal.record("pass", node)
            let healedAt = Date()
            try await rig.until("\(node) making \(importConsumer) again") { (try? await js.consumerInfo(stream: "HERALD", consumer: importConsumer)) != nil }
            // Every event the others published while it was cut off reaches its archive, once.
            let missed = Set(rig.watcher.events.filter { $0.node != node && $0.time > cutAt && $0.time < healedAt }.map(\.id))
            #expect(!missed.isEmpty)
            try await rig.until("\(node) importing the \(missed.count) events the others published while it was cut off") {
                Set((try? rig.importedIDs(node)) ?? []).isSuperset(of: missed)
            }
            let doubled = Dictionary(((try? rig.importedIDs(node)) ?? []).filter(missed.contains).map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }
            #expect(doubled.isEmpty, "\(node) imported twice: \(doubled.keys.sorted())")
        }
    }

    /// Three servers, every stream with three replicas: the server leading the lease bucket's
    /// stream is killed (or stopped): the bucket elects another leader, the lease keeps its
    /// guarantees (the checker) and is renewed or taken again, and the todos go on loading.
    @Test(.timeLimit(.minutes(10)), arguments: ["kill", "pause"])
    func aLeaseBucketThatLostItsLeaderKeepsTheLeaseAndProgressResumes(fault: String) async throws {
        try await run(servers: 3, name: "lease-leader-\(fault)") { rig, journal in
            _ = try await rig.settledHolder()
            var leader = ""
            try await rig.until("a leader of KV_herald_leases") {
                leader = await rig.streamLeader("KV_herald_leases") ?? ""
                return !leader.isEmpty
            }
            let index = try #require(Int(leader.dropFirst())) - 1
            let before = try #require(await rig.lease("todos"))
            if fault == "kill" {
                await rig.servers[index].halt(crash: true)
                journal.record("kill -9 (leads KV_herald_leases)", leader)
            } else {
                rig.servers[index].freeze()
                journal.record("SIGSTOP (leads KV_herald_leases)", leader)
            }
            let faultAt = Date()
            try await rig.until("KV_herald_leases electing a leader other than \(leader)") {
                guard let now = await rig.streamLeader("KV_herald_leases") else { return false }
                return now != leader
            }
            try await rig.until("the todo lease written again after the election, and two todo loads by its holder") {
                guard let lease = await rig.lease("todos"), lease.revision > before.revision else { return false }
                return rig.watcher.events.filter { $0.subject == Self.finished("todos") && $0.node == lease.node && $0.time > faultAt }.count >= 2
            }
            if fault == "kill" {
                try await rig.servers[index].restart()
                journal.record("start", leader)
            } else {
                rig.servers[index].thaw()
                journal.record("SIGCONT", leader)
            }
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
        let passed = try await run(servers: servers, name: "random", seed: seed) { rig, journal in
            var schedule = NemesisSchedule(generator: SeededGenerator(seed: seed), rig: rig, journal: journal)
            counts = try await schedule.run(for: seconds)
        }
        let survived = counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        print("nemesis: seed \(seed): \(counts.values.reduce(0, +)) faults: \(survived)")
        try? NemesisJournal.appendSummary(scenario: "random", seed: seed, seconds: seconds, servers: servers,
                                          faults: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }), passed: passed)
        #expect(!counts.isEmpty)
    }
}

/// A nemesis scenario could not go on: a daemon exited, or a wait ran into its hang guard.
struct NemesisFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
