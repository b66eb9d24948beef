import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Three `herald run` daemons on real nats-servers against one sandbox: each loader pulled by one
/// node at a time, every event stored once and seen by a plain NATS client, every todo posted
/// once, across a node killed with SIGKILL, a nats-server restart, and a server of a three-server
/// cluster killed.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct ClusterProcessTests {
    static let herald = BuiltProducts.url(of: "herald")

    enum Disruption: Sendable {
        case killLeader
        case restartServer
        case killServer
    }

    @Test func threeNodesShareTheLoadersAndPostsAndWhenTheLeaderIsKilledAnotherTakesOverPostingEachTodoOnce() async throws {
        try await run(.killLeader, clusterOfThree: false)
    }

    @Test func afterANATSServerRestartTheNodesGoOnAnnouncingNothingTwiceAndPostingEachTodoOnce() async throws {
        try await run(.restartServer, clusterOfThree: false)
    }

    @Test func onAThreeServerClusterWithThreeReplicasLosingOneServerLosesNothingAndPostsEachTodoOnce() async throws {
        try await run(.killServer, clusterOfThree: true)
    }

    private func run(_ disruption: Disruption, clusterOfThree: Bool) async throws {
        let herald = try #require(Self.herald)
        let rig = try await ClusterRig(herald: herald, clusterOfThree: clusterOfThree)
        do {
            try await scenario(rig, disruption)
        } catch {
            await rig.tearDown()
            throw error
        }
        await rig.tearDown()
    }

    private static func finished(_ loader: String) -> String { "herald.loader.\(loader).finished" }

    private func scenario(_ rig: ClusterRig, _ disruption: Disruption) async throws {
        let watcher = rig.watcher
        for node in ClusterRig.nodes {
            let running = await rig.daemon(node)?.waitForStandardError { $0.contains("herald: running") }
            #expect(running == true, "node \(node) did not start: \(rig.logs[node] ?? "")")
        }
        // Steady: each loader announced three times.
        let steady = await watcher.wait { events in
            ["todos", "itmedia"].allSatisfy { loader in events.filter { $0.subject == Self.finished(loader) }.count >= 3 }
        }
        #expect(steady, "logs: \(rig.logs)")
        let before = Date()
        let leader = try #require(watcher.events.last { $0.subject == Self.finished("todos") }?.node)

        var killedLog = ""
        switch disruption {
        case .killLeader:
            let killed = try #require(await rig.kill9(leader))
            #expect([SIGKILL, 128 + SIGKILL].contains(killed.status))
            killedLog = killed.stderr
            await watcher.wait { $0.contains { $0.subject == Self.finished("todos") && $0.node != leader && $0.time > before } }
        case .restartServer:
            try await rig.servers[0].restart()
        case .killServer:
            await rig.servers[0].halt(crash: true)
        }
        let after = Date()
        // Each loader announced twice more after the disruption.
        await watcher.wait { events in
            ["todos", "itmedia"].allSatisfy { loader in events.filter { $0.subject == Self.finished(loader) && $0.time > after }.count >= 2 }
        }

        // Every todo the sandbox has now gets posted (the loaders announce every second).
        let expected = Set(try await rig.todos().map { "New todo: \($0)" })
        var posts = try await rig.sandbox.posts()
        var ticks = 0
        while !Set(posts).isSuperset(of: expected), ticks < 1000 {
            await watcher.next()
            posts = try await rig.sandbox.posts()
            ticks += 1
        }
        #expect(Set(posts).isSuperset(of: expected), "not posted: \(expected.subtracting(posts).sorted())")

        let stopped = await rig.stopDaemons()
        for (node, result) in stopped {
            #expect(result.status == 0, "node \(node): \(result.stderr)")
        }
        var logs = stopped.mapValues(\.stderr)
        if disruption == .killLeader { logs[leader] = killedLog }

        // Each todo posted once, and only todos.
        posts = try await rig.sandbox.posts()
        #expect(Set(posts).count == posts.count, "posted twice: \(Dictionary(grouping: posts, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted())")
        #expect(Set(posts).isSubset(of: Set(try await rig.todos().map { "New todo: \($0)" })))

        // Every event stored once; the plain client saw them (it was disconnected by the restart);
        // each node stopped gracefully stored exactly its own loader and post events.
        let stored = try await watcher.storedEvents()
        #expect(Set(stored.map(\.id)).count == stored.count, "an event stored twice")
        if disruption != .restartServer {
            let missed = Set(stored.map(\.id)).subtracting(watcher.events.map(\.id))
            #expect(missed.isEmpty, "the plain NATS client missed \(missed.count) stored events")
        }
        for node in stopped.keys {
            let exported = Set(stored.filter { $0.node == node && ($0.subject.hasPrefix("herald.loader.") || $0.subject.hasPrefix("herald.post.")) }.map(\.id))
            let archived = try rig.archivedLocalIDs(node, topics: ["loader.", "post."])
            #expect(archived == exported, """
                node \(node): archived, not stored: \(archived.subtracting(exported).sorted()); stored, not archived: \
                \(exported.subtracting(archived).sorted())
                \(logs[node]?.split(separator: "\n").filter { $0.contains("export") || $0.contains("stopped") || $0.contains("ERROR") }.joined(separator: "\n") ?? "")
                """)
        }

        for loader in ["todos", "itmedia"] {
            try check(loader, stored: stored, logs: logs, before: before)
        }
        if disruption == .killLeader {
            let holders = stored.filter { $0.subject == Self.finished("todos") }.sorted { $0.time < $1.time }.map(\.node)
            #expect(holders.last != leader && holders.contains(leader), "the todos loader did not move off the killed node: \(holders)")
        }
    }

    /// One node at a time runs the loader: each load comes from the node that took the lease
    /// last before it (the daemons' logs say when), one node before the disruption, and no item
    /// announced twice, except that a node taking a loader announces again, in its first load,
    /// what the last holder announced after its last saved state (its post intents were stored
    /// once, by the same idempotency key).
    private func check(_ loader: String, stored: [StreamedEvent], logs: [String: String], before: Date) throws {
        let loads = stored.filter { $0.subject == Self.finished(loader) }.sorted { $0.time < $1.time }
        var tenures: [(time: Date, node: String)] = []
        for (node, log) in logs {
            for line in log.split(separator: "\n") where line.contains("cluster.lease.\(loader).acquired") {
                let stamp = String(line.prefix { $0 != " " })
                let time = try Date(stamp, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
                tenures.append((time, node))
            }
        }
        tenures.sort { $0.time < $1.time }
        #expect(Set(loads.filter { $0.time < before }.map(\.node)).count == 1, "\(loader) ran on several nodes before the disruption")
        var announced: [String: Int] = [:]
        var loadsInTenure: [Int: Int] = [:]
        for load in loads {
            guard let tenure = tenures.lastIndex(where: { $0.time <= load.time }) else {
                Issue.record("\(loader): a load by \(load.node) before any node took the lease")
                continue
            }
            #expect(tenures[tenure].node == load.node, "\(loader): \(load.node) loaded while \(tenures[tenure].node) held the lease (\(tenures))")
            let position = loadsInTenure[tenure, default: 0]
            loadsInTenure[tenure] = position + 1
            for item in load.newItems {
                if let first = announced[item] {
                    #expect(first < tenure && position == 0, "\(loader): item \(item) announced again by \(load.node) in load \(position + 1) of its tenure")
                }
                announced[item] = tenure
            }
        }
    }
}
