import HeraldCluster
import HeraldTestSupport
import Testing
import HeraldTesting

@Suite struct LeaseTests {
    private func pair(ttl: Duration = .seconds(15)) -> (ManualClock, InMemoryKeyValue<ManualClock>, LoaderLease<ManualClock>, LoaderLease<ManualClock>) {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "leases", ttl: ttl, clock: clock)
        let a = LoaderLease(loader: "home", node: "a", ttl: ttl, bucket: bucket, clock: clock)
        let b = LoaderLease(loader: "home", node: "b", ttl: ttl, bucket: bucket, clock: clock)
        return (clock, bucket, a, b)
    }

    @Test func theFirstNodeToCreateTheKeyHoldsTheLeaseAndTheOtherSeesWho() async {
        let (_, _, a, b) = pair()
        #expect(await a.refresh() == .acquired)
        #expect(await b.refresh() == .none)
        #expect(a.isHeld && !b.isHeld)
        #expect(b.lastHolder == "a")
    }

    @Test func aRenewedLeaseStaysWithItsHolder() async {
        let (clock, _, a, b) = pair()
        _ = await a.refresh()
        for _ in 0..<10 {
            clock.advance(by: .seconds(5))
            #expect(await a.refresh() == .none)
            #expect(await b.refresh() == .none)
            #expect(a.isHeld && !b.isHeld)
        }
    }

    @Test func aLeaseNotRenewedExpiresAndAnotherNodeTakesItThenTheOldHolderLearnsItLostIt() async {
        let (clock, _, a, b) = pair()
        _ = await a.refresh()
        clock.advance(by: .seconds(15))
        #expect(!a.isHeld)  // on a's own clock, before any answer
        #expect(await b.refresh() == .acquired)
        #expect(await a.refresh() == .lost("the lease changed in the bucket (it expired and another node may hold it)"))
        #expect(b.isHeld && !a.isHeld)
    }

    @Test func aHolderThatCannotReachTheBucketKeepsTheLeaseUntilItsTimeRunsOutThenLosesIt() async {
        let (clock, bucket, a, _) = pair()
        _ = await a.refresh()
        clock.advance(by: .seconds(5))
        bucket.failNext(.unavailable("no server"))
        #expect(await a.refresh() == .none)
        #expect(a.isHeld)
        #expect(a.remaining == .seconds(10))
        clock.advance(by: .seconds(10))
        bucket.failNext(.unavailable("no server"))
        #expect(await a.refresh() == .lost("not renewed within the lease's TTL: no server"))
        #expect(!a.isHeld)
    }

    @Test func theLeaseIsCountedFromWhenTheWriteWasSentNotAnswered() async {
        let (clock, _, a, b) = pair()
        _ = await a.refresh()
        // The bucket stored it at the same instant here; a's deadline is never later than the bucket's expiry.
        clock.advance(by: .seconds(15) - .milliseconds(1))
        #expect(a.isHeld)
        #expect(await b.refresh() == .none)
        clock.advance(by: .milliseconds(1))
        #expect(!a.isHeld)
        #expect(await b.refresh() == .acquired)
    }

    @Test func aReleasedLeaseCanBeTakenAtOnce() async {
        let (_, bucket, a, b) = pair()
        _ = await a.refresh()
        await a.release()
        #expect(!a.isHeld)
        #expect(bucket.snapshot.isEmpty)
        #expect(await b.refresh() == .acquired)
    }

    @Test func concurrentCreatesGiveOneHolder() async {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "leases", ttl: .seconds(15), clock: clock)
        let leases = (0..<8).map { LoaderLease(loader: "todos", node: "n\($0)", ttl: .seconds(15), bucket: bucket, clock: clock) }
        let acquired = await withTaskGroup(of: Bool.self) { group in
            for lease in leases { group.addTask { await lease.refresh() == .acquired } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(acquired == 1)
        #expect(leases.filter(\.isHeld).count == 1)
    }
}
