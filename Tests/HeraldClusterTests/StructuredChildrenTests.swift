import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldServices
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// Held until released or until the waiting task is cancelled; then it stays open.
private final class Hold: Sendable {
    private let state = SyncLock<(waiter: CheckedContinuation<Void, Never>?, open: Bool)>((nil, false))

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.open || Task.isCancelled { return true }
                    state.waiter = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            release()
        }
    }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.open = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}

/// What happened, in order, with a wait for an entry (a gate, not a sleep).
private final class Journal: Sendable {
    private let state = SyncLock<(entries: [String], waiters: [(String, CheckedContinuation<Void, Never>)])>(([], []))

    var entries: [String] { state.withLock { $0.entries } }

    func add(_ entry: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.entries.append(entry)
            let ready = state.waiters.filter { $0.0 == entry }.map(\.1)
            state.waiters.removeAll { $0.0 == entry }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    func wait(for entry: String) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.entries.contains(entry) { return true }
                state.waiters.append((entry, waiter))
                return false
            }
            if now { waiter.resume() }
        }
    }
}

/// Reports that a test yields; the iteration, once it has nothing more, takes a few hops before
/// it marks that it ended (so a `run()` that does not wait for it returns first).
private struct SlowlyEndingReports: AsyncSequence, Sendable {
    typealias Element = ClusterConnectionChanged
    typealias Failure = Never

    let base: AsyncStream<ClusterConnectionChanged>
    let journal: Journal

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<ClusterConnectionChanged>.Iterator
        let journal: Journal

        mutating func next() async -> ClusterConnectionChanged? {
            if let report = await base.next() { return report }
            for _ in 0..<100 { await Task.yield() }
            journal.add("reports ended")
            return nil
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> ClusterConnectionChanged? {
            if let report = await base.next(isolation: actor) { return report }
            for _ in 0..<100 { await Task.yield() }
            journal.add("reports ended")
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), journal: journal) }
}

/// A backend whose reports go on after its close: only the connection service's cancellation
/// of its forwarding ends them.
private final class EndlessReportsBackend: ClusterBackend {
    let publisher: any ClusterStreamPublisher = MemoryClusterBackend.Publisher()
    let imports: any ClusterPullConsumer = MemoryClusterBackend.Consumer()
    let intents: any ClusterPullConsumer = MemoryClusterBackend.Consumer()
    let leases: any ClusterKeyValue = InMemoryKeyValue(name: "leases", clock: ContinuousClock())
    let states: any ClusterKeyValue = InMemoryKeyValue(name: "states", clock: ContinuousClock())
    let journal = Journal()
    let reports: any AsyncSequence<ClusterConnectionChanged, Never> & Sendable
    let reporter: AsyncStream<ClusterConnectionChanged>.Continuation

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: ClusterConnectionChanged.self)
        reports = SlowlyEndingReports(base: stream, journal: journal)
        reporter = continuation
    }

    func close() async { journal.add("closed") }
}

/// One delivery, then nothing until the puller is cancelled.
private final class OneDelivery: ClusterPullConsumer {
    private let pending: SyncLock<[ClusterDelivery]>

    init(_ delivery: ClusterDelivery) {
        pending = SyncLock([delivery])
    }

    func fetch(batch: Int, wait: Duration) async throws(ClusterError) -> [ClusterDelivery] {
        let next = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        if !next.isEmpty { return next }
        await Hold().wait()
        throw ClusterError.cancelled
    }
}

/// A post service whose answer waits until the test lets it go.
private final class HeldService: PostService {
    let journal = Journal()
    private let hold = Hold()

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        journal.add("called")
        await hold.wait()
        return "post-1"
    }

    func answer() { hold.release() }
}

/// A publisher whose publish waits until its task is cancelled.
private struct StuckPublisher: ClusterStreamPublisher {
    let journal = Journal()

    func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>] {
        journal.add("publishing")
        await Hold().wait()
        journal.add("publish cancelled")
        return messages.map { _ in .failure(.cancelled) }
    }
}

/// Runs a service in a task that a graceful shutdown cancels: the service's own `run()` sees
/// its task cancelled (a group stopping at once, on a second signal, does that).
private struct CancelledAtShutdown: Service {
    let service: any Service

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await service.run() }
    }
}

/// The cluster services' work runs in child tasks: nothing outlives `run()`, and cancelling
/// `run()` reaches it.
@Suite(.timeLimit(.minutes(5)))
struct StructuredChildrenTests {
    /// Before: the forwarding of the reports was a task of its own, cancelled and not awaited,
    /// so it could still publish after `run()` returned.
    @Test func theConnectionServiceReturnsOnlyAfterItsForwardingOfTheReportsEnded() async throws {
        let backend = EndlessReportsBackend()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "cluster.>")
        let service = ClusterConnectionService(settings: ClusterTestSettings.make(["nats://127.0.0.1:1"], node: "a"),
                                               connector: { _ in backend }, bus: bus, clock: ContinuousClock())
        let group = await RunningGroup([.init("cluster.connection", service)])
        backend.reporter.yield(ClusterConnectionChanged(node: "a", kind: .reconnected, detail: "nats://127.0.0.1:1"))
        let forwarded = await log.first(ClusterConnectionChanged.self) { $0.kind == .reconnected }
        #expect(forwarded != nil)
        try await group.stop().get()
        #expect(backend.journal.entries == ["closed", "reports ended"])
    }

    /// Before: the heartbeat telling the server the worker is still busy was a task of its own,
    /// cancelled and not awaited, so an in-progress settlement could still be on its way when
    /// the intent was acknowledged.
    @Test func aPostWorkersHeartbeatHasEndedBeforeTheIntentIsAcknowledged() async throws {
        let clock = ManualClock()
        let authenticator = try IntentAuthenticator(secret: String(repeating: "cluster-secret.", count: 3))
        let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: try PostTemplate("x"), media: nil))
        let intent = PostIntent(key: "todo:5", rule: "todo", service: "svc", content: .status(text: "hello", media: nil), correlation: nil, created: Date())
        let settlements = Journal()
        let heartbeat = Hold()
        let delivery = ClusterDelivery(message: try ClusterPostIntake<ContinuousClock>.message(for: intent, node: "a", signedBy: authenticator),
                                       deliveryCount: 1) { settlement in
            switch settlement {
            case .inProgress:
                settlements.add("in progress")
                await heartbeat.wait()  // until the heartbeat is cancelled
                for _ in 0..<100 { await Task.yield() }
                settlements.add("in progress ended")
            default:
                settlements.add("\(settlement)")
            }
        }
        let service = HeldService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let worker = ClusterPostWorker(name: "posts", rules: [rule], services: ["svc": service], consumer: OneDelivery(delivery),
                                       records: InMemoryKeyValue(name: "states", clock: clock), bus: bus, node: "a", authenticator: authenticator,
                                       retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3), ackWait: .seconds(30), clock: clock)
        let group = await RunningGroup([.init("posts", worker)])
        await service.journal.wait(for: "called")
        // A third of the ack wait passes while the service has not answered: the heartbeat
        // settles in progress, and is still at it when the answer comes.
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(10))
        await settlements.wait(for: "in progress")
        service.answer()
        let sent = await log.first(PostSent.self)
        #expect(sent?.key == "todo:5" && sent?.id == "post-1")
        #expect(settlements.entries == ["in progress", "in progress ended", "ack"])
        try await group.stop().get()
    }

    /// Before: the publishes ran on a task of their own that cancelling `run()` did not reach:
    /// a publish that never answered kept `run()` from returning.
    @Test func cancellingThePostIntakeEndsThePublishInFlight() async throws {
        let authenticator = try IntentAuthenticator(secret: String(repeating: "cluster-secret.", count: 3))
        let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: try PostTemplate("x"), media: nil))
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let publisher = StuckPublisher()
        let intake = ClusterPostIntake(name: "posts", rules: [rule], bus: bus, publisher: publisher, queueName: "HERALD_POSTS",
                                       ledger: IntentLedger(), node: "a", authenticator: authenticator,
                                       retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3), clock: ManualClock())
        let group = await RunningGroup([.init("posts", CancelledAtShutdown(service: intake))])
        try bus.post(Signal(topic: "orders.new", n: 1))
        await publisher.journal.wait(for: "publishing")
        try await group.stop().get()
        #expect(publisher.journal.entries == ["publishing", "publish cancelled"])
        let held = log.events(PostHeld.self)
        #expect(held.count == 1 && held.first?.rule == "todo", "\(held)")
    }
}
