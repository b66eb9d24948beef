import Foundation
import Herald
import HeraldCluster
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// A post queue that refuses the first intent for good (larger than it takes) and stores the rest.
private final class TooLargeFirstPublisher: ClusterStreamPublisher {
    private let calls = SyncLock(0)
    /// Opens at the second publish.
    let second = Gate()

    var publishes: Int { calls.withLock { $0 } }

    func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>] {
        let call = calls.withLock { calls in
            calls += 1
            return calls
        }
        if call == 2 { second.open() }
        return messages.map { _ in
            call == 1 ? .failure(.permanent("publishing to herald-posts.todo: JetStream error 10054 (400): message size exceeds maximum allowed"))
                : .success(ClusterPublishAck(stream: "HERALD_POSTS", sequence: UInt64(call), duplicate: false))
        }
    }
}

struct ClusterPostIntakeTests {
    /// Before: an intent the queue can never take was reported held and left so, and the ledger
    /// then refused every later state save of the announcing loader for the rest of the run.
    @Test(.timeLimit(.minutes(5))) func anIntentTheQueueCanNeverTakeEndsFailedAndHoldsNoSave() async throws {
        let authenticator = try IntentAuthenticator(secret: String(repeating: "cluster-secret.", count: 3))
        let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: try PostTemplate("x"), media: nil))
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let publisher = TooLargeFirstPublisher()
        let ledger = IntentLedger()
        let intake = ClusterPostIntake(name: "posts", rules: [rule], bus: bus, publisher: publisher, queueName: "HERALD_POSTS",
                                       ledger: ledger, node: "a", authenticator: authenticator,
                                       retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3), clock: ManualClock())
        let group = await RunningGroup([.init("posts", intake)])
        try bus.post(Signal(topic: "orders.new", n: 1))
        let failed = await log.first(PostFailed.self)
        #expect(failed?.rule == "todo" && failed?.reason.contains("cannot take the intent") == true && failed?.reason.contains("10054") == true)
        #expect(log.events(PostHeld.self).isEmpty)
        #expect(await ledger.settle() == 0, "nothing held: the loader's saves go on")
        // The next intent is stored as usual, once.
        try bus.post(Signal(topic: "orders.new", n: 2))
        await publisher.second.wait()
        #expect(await ledger.settle() == 0)
        #expect(publisher.publishes == 2)
        try await group.stop().get()
    }
}
