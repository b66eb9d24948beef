import HeraldSync
import Foundation
import Herald
@testable import HeraldSubscribers
import HeraldTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A disk for the outbox that a test fills and frees: while full, every journal write fails
/// with ENOSPC, as `write(2)` does on a full file system.
final class FillableDisk: Sendable {
    private let state = SyncLock((full: false, refused: 0))

    /// Writes refused so far.
    var refused: Int { state.withLock { $0.refused } }

    func fill() { state.withLock { $0.full = true } }
    func free() { state.withLock { $0.full = false } }

    var journalWrite: PostOutbox.Write {
        { [self] descriptor, bytes in
            let full = state.withLock { state -> Bool in
                if state.full { state.refused += 1 }
                return state.full
            }
            guard !full else {
                errno = ENOSPC
                return -1
            }
            return write(descriptor, bytes.baseAddress, bytes.count)
        }
    }
}

/// The outbox on a full disk: a post whose intent cannot be made durable is never sent from
/// memory (a restart would post it again); it is held, retried on the scheduler's clock, and
/// sent once the journal takes it.
@Suite(.timeLimit(.minutes(5))) struct PostOutboxFullDiskTests {
    static func journal(_ harness: PostHarness) -> String {
        (try? String(contentsOfFile: harness.outboxPath, encoding: .utf8)) ?? ""
    }

    @Test func anIntentTheJournalRefusesIsHeldUnsentUntilWrittenThenSentOnce() async throws {
        try await PostHarness.run { harness in
            let disk = FillableDisk()
            let service = ScriptedPostService([])
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service], write: disk.journalWrite)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            disk.fill()
            try await harness.announce(PostHarness.todos(["buy milk"]))

            try #require(await harness.recorder.wait(for: 1, PostHeld.self), "a held post is reported: \(harness.recorder.topics)")
            let held = try #require(harness.recorder.events(PostHeld.self).first)
            #expect(held.key == "tweet:item:loader.todos:t1" && held.path == harness.outboxPath)
            #expect(held.reason.contains(String(cString: strerror(ENOSPC))), "reason: \(held.reason)")
            // Retried on the clock, with backoff; nothing is sent while the journal refuses.
            for _ in 0..<3 {
                await harness.clock.waitForSleepers(1)
                #expect(service.recorded.isEmpty)
                harness.clock.advanceToNextDeadline()
            }
            await harness.clock.waitForSleepers(1)
            #expect(service.recorded.isEmpty)
            #expect(disk.refused >= 4)
            #expect(harness.clock.now.offset == .seconds(1 + 2 + 4))
            #expect(!Self.journal(harness).contains(#""op":"intent""#))
            #expect(scheduler.pendingCount == 1)

            disk.free()
            harness.clock.advanceToNextDeadline()
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            #expect(service.recorded.map(\.key) == ["tweet:item:loader.todos:t1"])
            #expect(service.recorded.first?.mayExist == false)
            #expect(harness.recorder.topics == ["post.tweet.held", "post.tweet.recorded", "post.tweet.sent"])
            let recorded = try #require(harness.recorder.events(PostRecorded.self).first)
            #expect(recorded.key == held.key && recorded.refusals >= 4 && recorded.path == harness.outboxPath)
            let journal = Self.journal(harness)
            #expect(journal.contains(#""op":"intent""#) && journal.contains(#""op":"done""#))
            await running.stop()

            // Recorded and done: a restart that hears of the item again posts nothing.
            let restarted = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let restartedRunning = await RunningGroup("restarted", restarted.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["buy milk"]))
            #expect(restarted.pendingCount == 0)
            await restartedRunning.stop()
            #expect(service.recorded.count == 1)
        }
    }

    @Test func heldPostsKeepTheirOrderAndLaterOnesWaitBehindThem() async throws {
        try await PostHarness.run { harness in
            let disk = FillableDisk()
            let scheduler = harness.scheduler([try PostHarness.rule()], write: disk.journalWrite)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            disk.fill()
            try await harness.announce(PostHarness.todos(["first", "second"]))
            try #require(await harness.recorder.wait(for: 2, PostHeld.self))
            await harness.clock.waitForSleepers(1)
            disk.free()
            // Written at once now, but sent only after the held ones before it.
            try await harness.announce(PostHarness.todos(["third"], firstID: 3))
            #expect(harness.sandbox.posts().isEmpty)
            harness.clock.advanceToNextDeadline()
            #expect(await harness.recorder.wait(for: 3, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: first", "New todo: second", "New todo: third"])
            #expect(harness.recorder.events(PostRecorded.self).map(\.key) == ["tweet:item:loader.todos:t1", "tweet:item:loader.todos:t2"])
            await running.stop()
        }
    }

    @Test func postsHeldWhenTheDaemonStopsAreMadeOnceWhenTheLoaderAnnouncesThemAgain() async throws {
        try await PostHarness.run { harness in
            let disk = FillableDisk()
            let full = harness.scheduler([try PostHarness.rule()], write: disk.journalWrite)
            let fullRunning = await RunningGroup("full", full.service(on: harness.bus))
            disk.fill()
            try await harness.announce(PostHarness.todos(["one", "two"]))
            try #require(await harness.recorder.wait(for: 2, PostHeld.self))
            await harness.clock.waitForSleepers(1)
            await fullRunning.stop()
            #expect(harness.sandbox.posts().isEmpty)

            // The loader's state was not saved either (the same full disk): it announces them
            // again after the restart, with a newer one.
            let restarted = harness.scheduler([try PostHarness.rule()])
            let restartedRunning = await RunningGroup("restarted", restarted.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["one", "two", "three"]))
            #expect(await harness.recorder.wait(for: 3, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: one", "New todo: two", "New todo: three"])
            await restartedRunning.stop()
        }
    }
    @Test func aStartOnAFullDiskKeepsTheJournalUncompactedAndSendsWhatItHolds() async throws {
        try await PostHarness.run { harness in
            // A run posts t1, then stops with t2's post in flight: t1 done, t2 pending.
            let sender = harness.scheduler([try PostHarness.rule()])
            let senderRunning = await RunningGroup("sender", sender.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["done before"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await senderRunning.stop()
            let hanging = HangingPostService()
            let stopped = harness.scheduler([try PostHarness.rule()], services: ["twitter": hanging])
            let stoppedRunning = await RunningGroup("stopped", stopped.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["left pending"], firstID: 2))
            await hanging.entered()
            await stoppedRunning.stop()
            let before = Self.journal(harness)

            // The disk is full at the next start: the journal cannot be compacted, but it is
            // read and kept as it is, and the scheduler starts.
            let disk = FillableDisk()
            disk.fill()
            let service = ScriptedPostService([])
            let full = harness.scheduler([try PostHarness.rule()], services: ["twitter": service], write: disk.journalWrite)
            let fullRunning = await RunningGroup("full", full.service(on: harness.bus))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            #expect(service.recorded.map(\.key) == ["tweet:item:loader.todos:t2"] && service.recorded.first?.mayExist == true)
            #expect(Self.journal(harness) == before, "unchanged: neither compacted nor marked done")
            #expect(!FileManager.default.fileExists(atPath: harness.outboxPath + ".compact"))
            // What it knew stays known.
            try await harness.announce(PostHarness.todos(["done before", "left pending"]))
            #expect(full.pendingCount == 0)
            await fullRunning.stop()
            #expect(service.recorded.count == 1)
        }
    }

    @Test func aTornLastLineIsCutOffWhenTheJournalCannotBeCompacted() async throws {
        try await PostHarness.run { harness in
            let sender = harness.scheduler([try PostHarness.rule()])
            let senderRunning = await RunningGroup("sender", sender.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["recorded"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await senderRunning.stop()
            let whole = Self.journal(harness)
            let handle = try #require(FileHandle(forWritingAtPath: harness.outboxPath))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(#"{"op":"intent","key":"torn"#.utf8))  // a crash mid-append
            try handle.close()

            let disk = FillableDisk()
            disk.fill()
            let scheduler = harness.scheduler([try PostHarness.rule()], write: disk.journalWrite)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            // Cut after the last whole line, so the next record starts a line of its own.
            #expect(Self.journal(harness) == whole)
            disk.free()
            try await harness.announce(PostHarness.todos(["after the cut"], firstID: 2))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            await running.stop()
            let restarted = harness.scheduler([try PostHarness.rule()])
            let restartedRunning = await RunningGroup("restarted", restarted.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["recorded", "after the cut"]))
            #expect(restarted.pendingCount == 0)
            await restartedRunning.stop()
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: recorded", "New todo: after the cut"])
        }
    }
}
