import Foundation
import HeraldTestSupport
import Testing

/// The checker of the nemesis runs can fail: each guarantee it checks, broken in a synthetic
/// history, is reported; a history that keeps them all passes.
struct NemesisCheckerTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    /// Two todos, each posted once; node a took the lease, loaded twice, b took it over and
    /// announced again in its first load what a announced last (the boundary Cluster.md states).
    static var good: NemesisHistory {
        var history = NemesisHistory()
        history.expectedPosts = ["New todo: one", "New todo: two"]
        history.allowedPosts = history.expectedPosts
        history.posts = history.expectedPosts
        history.tenures = [.init(loader: "todos", node: "a", time: at(0)), .init(loader: "todos", node: "b", time: at(10))]
        history.loads = [.init(loader: "todos", node: "a", time: at(1), items: ["1"]), .init(loader: "todos", node: "a", time: at(2), items: ["2"]),
                         .init(loader: "todos", node: "b", time: at(11), items: ["2"]), .init(loader: "todos", node: "b", time: at(12), items: [])]
        history.sends = [.init(node: "a", key: "k1", duplicate: false), .init(node: "c", key: "k2", duplicate: false),
                         .init(node: "b", key: "k2", duplicate: true)]
        history.saves = [.init(loader: "todos", revision: 3, seen: ["1"]), .init(loader: "todos", revision: 5, seen: ["1", "2"]),
                         .init(loader: "itmedia", revision: 4, sinceID: "10"), .init(loader: "itmedia", revision: 6, sinceID: "12")]
        history.storedIDs = ["e1", "e2", "e3"]
        history.exits = ["a": 0, "b": 0, "c": 0]
        return history
    }

    @Test func aHistoryKeepingEveryGuaranteePasses() {
        #expect(NemesisChecker.check(Self.good) == [])
    }

    @Test func aTodoPostedTwiceOrSentTwiceUnderOneKeyOrNeverIsReported() {
        var history = Self.good
        history.posts.append("New todo: one")
        history.sends.append(.init(node: "b", key: "k1", duplicate: false))
        history.expectedPosts.append("New todo: three")
        let problems = NemesisChecker.check(history)
        #expect(problems.contains { $0.contains("posted 2 times: New todo: one") })
        #expect(problems.contains { $0.contains("key k1 sent 2 times") })
        #expect(problems.contains { $0.contains("never posted: New todo: three") })
    }

    @Test func aStateGoingBackwardsIsReported() {
        var history = Self.good
        history.saves.append(.init(loader: "todos", revision: 7, seen: ["1"]))
        history.saves.append(.init(loader: "itmedia", revision: 8, sinceID: "11"))
        let problems = NemesisChecker.check(history)
        #expect(problems.contains { $0.contains("todos: the state at revision 7 lost [\"2\"]") })
        #expect(problems.contains { $0.contains("itmedia: sinceID went back from 12 to 11") })
    }

    @Test func overlappingLoadsAndAnItemAnnouncedTwiceInOneTenureAreReported() {
        var history = Self.good
        // a, paused, loads after b took the lease; b announces an item twice in its tenure.
        history.loads.append(.init(loader: "todos", node: "a", time: Self.at(13), items: ["3"]))
        history.loads.append(.init(loader: "todos", node: "b", time: Self.at(14), items: ["3"]))
        let problems = NemesisChecker.check(history)
        #expect(problems.contains { $0.contains("a loaded at") && $0.contains("while b held the lease") })
        #expect(problems.contains { $0.contains("item 3 announced again by b") })
    }

    @Test func aMessageStoredTwiceAndADaemonExitingNonZeroAreReported() {
        var history = Self.good
        history.storedIDs.append("e2")
        history.exits["c"] = 1
        let problems = NemesisChecker.check(history)
        #expect(problems.contains("stream message e2 stored more than once"))
        #expect(problems.contains("node c exited 1"))
    }
}
