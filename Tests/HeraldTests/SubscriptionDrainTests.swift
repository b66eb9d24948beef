import Foundation
import Herald
import HeraldTestSupport
import Testing
import HeraldTesting

/// ``Subscription/drain()``: what a queued subscription accepted is delivered before it ends
/// (what a reload that replaces a subscriber relies on).
@Suite struct SubscriptionDrainTests {
    @Test(.timeLimit(.minutes(5)))
    func drainDeliversWhatWaitsInTheMailboxThenEnds() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let release = HeraldTestSupport.Gate()
        let inHandler = HeraldTestSupport.Gate()
        let subscription = try bus.subscribeInBatches(matching: "test.tick", name: "drained", capacity: 16, overflow: .wait) { batch in
            inHandler.open()
            await release.wait()
            for envelope in batch { if let tick = envelope.event as? Tick { received.append(tick.number) } }
        }
        try bus.post(Tick(number: 1))
        await inHandler.wait()
        // The handler holds event 1; 2 and 3 wait in the mailbox.
        try bus.post(Tick(number: 2))
        try bus.post(Tick(number: 3))
        let drained = Task { await subscription.drain() }
        release.open()
        await drained.value
        #expect(received.values == [1, 2, 3])
        #expect(!subscription.isActive)
        try bus.post(Tick(number: 4))
        #expect(received.values == [1, 2, 3])
    }
}
