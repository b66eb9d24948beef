import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// A cluster without a server: buckets in memory, a publisher and consumers that answer at once
/// (with nothing to pull) unless a test scripted a failure for their next call, reports a test
/// yields.
final class MemoryClusterBackend: ClusterBackend {
    /// Failures for the next calls of one publisher or consumer, in order.
    final class Failures: Sendable {
        private let queue = SyncLock<[ClusterError]>([])
        /// Makes the next call fail with `error`.
        func failNext(_ error: ClusterError) { queue.withLock { $0.append(error) } }
        func next() -> ClusterError? { queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    }

    struct Publisher: ClusterStreamPublisher {
        var failures = Failures()
        func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>] {
            if let error = failures.next() { return messages.map { _ in .failure(error) } }
            return messages.enumerated().map { .success(ClusterPublishAck(stream: "MEMORY", sequence: UInt64($0.offset + 1), duplicate: false)) }
        }
    }

    struct Consumer: ClusterPullConsumer {
        var failures = Failures()
        func fetch(batch: Int, wait: Duration) async throws(ClusterError) -> [ClusterDelivery] {
            if let error = failures.next() { throw error }
            return []
        }
    }

    let publisher: any ClusterStreamPublisher
    let imports: any ClusterPullConsumer
    let intents: any ClusterPullConsumer
    let leases: any ClusterKeyValue
    let states: any ClusterKeyValue
    let reports: any AsyncSequence<ClusterConnectionChanged, Never> & Sendable
    let reporter: AsyncStream<ClusterConnectionChanged>.Continuation
    /// The scripted failures of the publisher, the import consumer and the intent consumer.
    let publishFailures = Failures(), importFailures = Failures(), intentFailures = Failures()

    init(leases: any ClusterKeyValue, states: any ClusterKeyValue) {
        self.leases = leases
        self.states = states
        publisher = Publisher(failures: publishFailures)
        imports = Consumer(failures: importFailures)
        intents = Consumer(failures: intentFailures)
        let (stream, continuation) = AsyncStream.makeStream(of: ClusterConnectionChanged.self)
        (reports, reporter) = (stream, continuation)
    }

    func close() async { reporter.finish() }
}

/// The times (on a manual clock) a connector was called.
private final class Calls: Sendable {
    private let times = SyncLock<[Duration]>([])
    func record(_ time: ManualClock.Instant) { times.withLock { $0.append(time.offset) } }
    var all: [Duration] { times.withLock { $0 } }
}

/// The connection service on its own, with connectors of the tests' own and a manual clock.
@Suite(.timeLimit(.minutes(5)))
struct ClusterConnectionServiceTests {
    private static func settings(connectWait: Duration = .seconds(10), startup: ClusterSettings.Startup = .fail) -> ClusterSettings {
        var settings = ClusterTestSettings.make(["nats://127.0.0.1:1"], node: "a", leaseTTL: .seconds(15))
        settings.connectWait = connectWait
        settings.startup = startup
        return settings
    }

    /// Runs `service` outside a group, moving `clock` to each sleeper's deadline, until it ends;
    /// what it threw and when (on the clock) it ended.
    private static func runOnManualTime(_ service: ClusterConnectionService<ManualClock>, _ clock: ManualClock) async -> (error: (any Error)?, ended: Duration) {
        let run = Task { () -> (error: (any Error)?, ended: Duration) in
            do {
                try await service.run()
                return (nil, clock.now.offset)
            } catch {
                return (error, clock.now.offset)
            }
        }
        let driver = Task {
            while !Task.isCancelled {
                await clock.waitForSleepers(1)
                if Task.isCancelled { break }
                clock.advanceToNextDeadline()
            }
        }
        let outcome = await run.value
        driver.cancel()
        // Wakes the driver if it waits for a sleeper that will not come.
        let poke = Task { try? await clock.sleep(for: .seconds(1)) }
        await driver.value
        clock.advance(by: .seconds(1))
        await poke.value
        return outcome
    }

    /// Before: 3 s gave up after 1.5 s (the next pause would have gone past the wait) and said
    /// it tried for 3 s.
    @Test func theConnectWaitLastsWhatIsConfiguredWithALastAttemptAtItsEnd() async throws {
        let clock = ManualClock()
        let calls = Calls()
        let service = ClusterConnectionService(settings: Self.settings(connectWait: .seconds(3)), connector: { _ in
            calls.record(clock.now)
            throw ClusterError.unavailable("connecting to nats://127.0.0.1:1: refused")
        }, bus: EventBus(), clock: clock)
        let (error, ended) = await Self.runOnManualTime(service, clock)
        #expect(calls.all == [.zero, .milliseconds(100), .milliseconds(300), .milliseconds(700), .milliseconds(1500), .seconds(3)])
        #expect(ended == .seconds(3))
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("(tried for 3.0 seconds)") && text.contains("refused"), "\(text)")
    }

    /// Before: an attempt that took 2 s (the connect timeout of a server that never answers)
    /// ran past the wait and the error still said 3 s.
    @Test func theErrorSaysHowLongStartUpActuallyTried() async throws {
        let clock = ManualClock()
        let service = ClusterConnectionService(settings: Self.settings(connectWait: .seconds(3)), connector: { _ in
            try await clock.sleep(for: .seconds(2))
            throw ClusterError.unavailable("connecting to nats://127.0.0.1:1: no answer")
        }, bus: EventBus(), clock: clock)
        let (error, ended) = await Self.runOnManualTime(service, clock)
        // Attempts at 0 s and 2.1 s, each taking 2 s: no new attempt starts after the wait.
        #expect(ended == .milliseconds(4100))
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("(tried for 4.1 seconds)"), "\(text)")
    }

    /// A group asked to stop while its cluster connection is still trying (SIGTERM at start-up)
    /// stops at once, without an error, however long the connect wait.
    @Test(arguments: [ClusterSettings.Startup.fail, .wait])
    func aShutdownWhileConnectingStopsTheServiceAtOnce(_ startup: ClusterSettings.Startup) async throws {
        let clock = ManualClock()
        let calls = Calls()
        let service = ClusterConnectionService(settings: Self.settings(connectWait: .seconds(3600), startup: startup), connector: { _ in
            calls.record(clock.now)
            throw ClusterError.unavailable("connecting to nats://127.0.0.1:1: refused")
        }, bus: EventBus(), clock: clock)
        let group = ServiceGroup([.init("cluster.connection", service)], clock: clock)
        let run = Task { () -> Result<Void, ServiceGroupError> in
            do throws(ServiceGroupError) {
                try await group.run()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        // The service waits between attempts; no time passes from here on.
        await clock.waitForSleepers(1)
        run.cancel()
        let result = await run.value
        #expect((try? result.get()) != nil, "\(result)")
        #expect(calls.all == [.zero])
        #expect(service.notConnectedReason != nil)
    }

    /// Readiness follows what the node can do: a lease renewal the bucket did not answer makes
    /// the node not ready while the connection is still up, and the next answer ready again.
    @Test func aLeaseRenewalWithoutAnAnswerMakesTheNodeNotReadyUntilTheBucketAnswersAgain() async throws {
        let clock = ManualClock()
        let leases = InMemoryKeyValue(name: "leases", ttl: .seconds(15), clock: clock)
        let memory = MemoryClusterBackend(leases: leases, states: InMemoryKeyValue(name: "states", clock: clock))
        let service = ClusterConnectionService(settings: Self.settings(), connector: { _ in memory }, bus: EventBus(), clock: clock)
        let group = await RunningGroup([.init("cluster.connection", service)])
        let backend = try #require(service.backend)
        #expect(service.notConnectedReason == nil)
        let lease = LoaderLease(loader: "home", node: "a", ttl: .seconds(15), bucket: backend.leases, clock: clock)
        #expect(await lease.refresh() == .acquired)
        #expect(service.notConnectedReason == nil)

        clock.advance(by: .seconds(5))
        leases.failNext(.unavailable("updating loader.home in the bucket leases: no reply within 10 seconds"))
        #expect(await lease.refresh() == .none)
        #expect(lease.isHeld)
        let reason = service.notConnectedReason
        #expect(reason?.contains("no reply within 10 seconds") == true, "\(reason ?? "nil")")

        // The next renewal is answered.
        #expect(await lease.refresh() == .none)
        #expect(service.notConnectedReason == nil)
        await group.stop()
    }

    /// The kinds of cluster work besides the leases that readiness follows.
    enum Work: String, CaseIterable, Sendable {
        case publish, importPull, intentPull

        /// The failures scripted for this kind's next call.
        func failures(of memory: MemoryClusterBackend) -> MemoryClusterBackend.Failures {
            switch self {
            case .publish: memory.publishFailures
            case .importPull: memory.importFailures
            case .intentPull: memory.intentFailures
            }
        }

        /// One call of this kind through `backend` (the service's tracked one); whether it was answered.
        func run(on backend: any ClusterBackend) async -> Bool {
            switch self {
            case .publish:
                let results = await backend.publisher.publish([ClusterMessage(subject: "herald.orders.new", payload: Array("{}".utf8))])
                return results.allSatisfy { (try? $0.get()) != nil }
            case .importPull: return (try? await backend.imports.fetch(batch: 1, wait: .seconds(1))) != nil
            case .intentPull: return (try? await backend.intents.fetch(batch: 1, wait: .seconds(1))) != nil
            }
        }

        /// The words readiness uses for it.
        var words: String {
            switch self {
            case .publish: "publishing"
            case .importPull: "pulling other nodes' events"
            case .intentPull: "pulling post intents"
            }
        }
    }

    /// A publish, an import pull or an intent pull without an answer makes the node not ready
    /// (naming what got no answer) while its connection is up; an answer of another kind does
    /// not make it ready again, a refusal of its own kind (an answer) does, and so does a success.
    @Test(arguments: Work.allCases)
    func workWithoutAnAnswerMakesTheNodeNotReadyUntilTheNextOfItsKindIsAnswered(_ work: Work) async throws {
        let clock = ManualClock()
        let memory = MemoryClusterBackend(leases: InMemoryKeyValue(name: "leases", clock: clock), states: InMemoryKeyValue(name: "states", clock: clock))
        let service = ClusterConnectionService(settings: Self.settings(), connector: { _ in memory }, bus: EventBus(), clock: clock)
        let group = await RunningGroup([.init("cluster.connection", service)])
        let backend = try #require(service.backend)
        #expect(await work.run(on: backend))
        #expect(service.notConnectedReason == nil)

        work.failures(of: memory).failNext(.unavailable("no reply within 10 seconds"))
        #expect(await !work.run(on: backend))
        let reason = service.notConnectedReason
        #expect(reason == "the cluster did not answer while \(work.words): no reply within 10 seconds", "\(reason ?? "nil")")

        // Every other kind answers: still not ready.
        for other in Work.allCases where other != work {
            #expect(await other.run(on: backend))
        }
        #expect(service.notConnectedReason == reason)

        // A cancelled call says nothing; a refusal is an answer.
        work.failures(of: memory).failNext(.cancelled)
        #expect(await !work.run(on: backend))
        #expect(service.notConnectedReason == reason)
        work.failures(of: memory).failNext(.refused("the server answered -ERR 'Permissions Violation'"))
        #expect(await !work.run(on: backend))
        #expect(service.notConnectedReason == nil)

        // Not answered again, then answered.
        work.failures(of: memory).failNext(.unavailable("no reply within 10 seconds"))
        #expect(await !work.run(on: backend))
        #expect(service.notConnectedReason != nil)
        #expect(await work.run(on: backend))
        #expect(service.notConnectedReason == nil)
        await group.stop()
    }
}
