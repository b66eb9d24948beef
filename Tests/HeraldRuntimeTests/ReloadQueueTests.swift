import Foundation
import HeraldStatus
import HeraldTestSupport
import HeraldSync
import Testing
@testable import HeraldRuntime

/// Reloads run one at a time, and the requests that come while one runs share the next one.
@Suite struct ReloadQueueTests {
    @Test
    func theMachineServesEveryRequestMadeDuringARunWithOneMoreRun() {
        var machine = ReloadMachine<String>()
        guard case .start(let first) = machine.request(nil) else { Issue.record("the first request does not start"); return }
        #expect(first.isEmpty)
        for _ in 0..<10 {
            guard case .wait = machine.request(nil) else { Issue.record("a request during a run starts another"); return }
        }
        guard case .wait = machine.request("a"), case .wait = machine.request("b") else { Issue.record("callers start runs"); return }
        #expect(machine.finished() == ["a", "b"])
        #expect(machine.finished() == nil)
        guard case .start(let again) = machine.request("c") else { Issue.record("idle again, a request does not start"); return }
        #expect(again == ["c"])
        let closed = machine.close()
        #expect(closed.running)
        guard case .refuse = machine.request("d") else { Issue.record("a closed machine starts"); return }
    }

    @Test(.timeLimit(.minutes(5)))
    func aStormOfTriggersDuringAReloadCostsOneMoreReload() async throws {
        let runs = SyncLock(0)
        let firstEntered = HeraldTestSupport.Gate(), firstRelease = HeraldTestSupport.Gate()
        let secondEntered = HeraldTestSupport.Gate(), secondRelease = HeraldTestSupport.Gate()
        let queue = ReloadQueue {
            let run = runs.withLock { value -> Int in
                value += 1
                return value
            }
            if run == 1 {
                firstEntered.open()
                await firstRelease.wait()
            } else if run == 2 {
                secondEntered.open()
                await secondRelease.wait()
            }
            return StatusReloadResult(ok: true, applied: true, changes: ["run \(run)"])
        }
        queue.trigger()
        await firstEntered.wait()
        for _ in 0..<50 { queue.trigger() }
        firstRelease.open()
        await secondEntered.wait()
        secondRelease.open()
        // Asked once the storm's reloads are done or running: served by a run of its own.
        let result = await queue.request()
        #expect(result.changes == ["run 3"])
        await queue.close()
        #expect(runs.withLock { $0 } == 3)
        let refused = await queue.request()
        #expect(!refused.applied)
        #expect(refused.errors == ["the daemon is stopping"])
    }
}
