import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldLoaders
import HeraldNATS
import HeraldServices
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// A post service that counts what it posts; with `mayExist` it finds a post already made for
/// the key (as the BaaS lookup and the Twitter-style duplicate status do), and it can hold its
/// answer until a test lets it go.
private final class CountingPostService: PostService {
    private struct State {
        var posts: [String: String] = [:]
        var calls: [(key: String, mayExist: Bool)] = []
        var held: CheckedContinuation<Void, Never>?
        var release = true
    }
    private let state = SyncLock(State())
    private let called = SyncLock<[CheckedContinuation<Void, Never>]>([])

    init(holding: Bool = false) {
        state.withLock { $0.release = !holding }
    }

    var posts: [String: String] { state.withLock { $0.posts } }
    var calls: [(key: String, mayExist: Bool)] { state.withLock { $0.calls } }

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        let id = state.withLock { state -> String in
            state.calls.append((intent.key, mayExist))
            if mayExist, let id = state.posts[intent.key] { return id }
            let id = "post-\(state.posts.count + 1)"
            state.posts[intent.key] = id
            return id
        }
        for waiter in called.withLock({ waiters in defer { waiters = [] }; return waiters }) { waiter.resume() }
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                if state.release { return true }
                state.held = continuation
                return false
            }
            if go { continuation.resume() }
        }
        return id
    }

    /// Returns once the service was called at least once.
    func waitUntilCalled() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { !$0.calls.isEmpty }
            if now { continuation.resume() } else { called.withLock { $0.append(continuation) } }
        }
    }

    /// Lets the held answer (and every later one) go.
    func answer() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.release = true
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }
}

/// The first value kept, of many offered.
private final class FirstValue<T: Sendable>: Sendable {
    private let storage = SyncLock<T?>(nil)
    func keep(_ value: T) { storage.withLock { if $0 == nil { $0 = value } } }
    var value: T? { storage.withLock { $0 } }
}

private actor IdleLoader: Loader {
    nonisolated let id: String
    init(id: String) { self.id = id }
    func load() async -> LoadOutcome { .finished(items: 0, new: 0) }
}

private struct IdleSchedule: Service {
    func run() async throws {
        announceStarted()
        try? await gracefulShutdown()
    }
}

/// Leases over the real key-value bucket and the shared post queue against a real nats-server.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct NATSLeaseAndPostTests {
    private static let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: (try? PostTemplate("x"))!, media: nil))
    private static func intent(_ key: String) -> PostIntent {
        PostIntent(key: key, rule: "todo", service: "svc", content: .status(text: "hello", media: nil), correlation: nil, created: Date())
    }

    static let secret = String(repeating: "cluster-secret.", count: 3)
    private static let authenticator = try! IntentAuthenticator(secret: secret)

    private static func message(_ intent: PostIntent, node: String) throws -> ClusterMessage {
        try ClusterPostIntake<ContinuousClock>.message(for: intent, node: node, signedBy: authenticator)
    }

    /// Whether the post queue is empty once the server has handled the acks sent so far: a
    /// work-queue stream drops an acknowledged message after the ack's round trip, not within
    /// it, so the stream is asked again after each further round trip (at most 50).
    private static func postQueueEmpties(_ backend: NATSClusterBackend) async throws -> Bool {
        for _ in 0..<50 {
            try await backend.connection.flush()
            if try await backend.jetStream.streamInfo("HERALD_POSTS").state.messages == 0 { return true }
        }
        return false
    }

    private static func worker(_ backend: NATSClusterBackend, _ service: CountingPostService, bus: EventBus) -> ClusterPostWorker<ContinuousClock> {
        ClusterPostWorker(name: "posts", rules: [rule], services: ["svc": service], consumer: backend.intents, records: backend.states, bus: bus,
                          node: backend.settings.node, authenticator: authenticator,
                          retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3),
                          ackWait: backend.settings.ackWait, clock: ContinuousClock())
    }

    @Test func aLeaseNotRenewedExpiresInTheBucketAndAnotherNodeTakesTheLoaderThenTheOldHolderLearnsItLost() async throws {
        // A 10 s lease: with 2 s, a slow machine could let a's lease lapse before b's probe.
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a", leaseTTL: .seconds(10)))
        let b = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "b", leaseTTL: .seconds(10)))
        let clock = ContinuousClock()
        let leaseA = LoaderLease(loader: "home", node: "a", ttl: .seconds(10), bucket: a.leases, clock: clock)
        #expect(await leaseA.refresh() == .acquired)
        let probe = LoaderLease(loader: "home", node: "b", ttl: .seconds(10), bucket: b.leases, clock: clock)
        #expect(await probe.refresh() == .none)
        #expect(probe.lastHolder == "a" && !probe.isHeld)

        let busB = EventBus()
        let log = try EventRecorder(bus: busB, matching: "cluster.lease.>")
        let service = LeasedLoaderService(lease: LoaderLease(loader: "home", node: "b", ttl: .seconds(10), bucket: b.leases, clock: clock),
                                          states: b.states, ledger: nil, bus: busB, clock: clock,
                                          makeLoader: { _ in IdleLoader(id: "home") }, makeSchedule: { _ in IdleSchedule() })
        let group = await RunningGroup([.init("loaders.home", service)])
        let taken = await log.first(ClusterLeaseChanged.self) { $0.change == .acquired }
        #expect(taken?.node == "b")
        guard case .lost = await leaseA.refresh() else {
            Issue.record("the old holder still renews a lease another node took")
            return
        }
        #expect(!leaseA.isHeld)
        let entry = try await a.leases.get("loader.home")
        #expect(entry.map { String(decoding: $0.value, as: UTF8.self) } == #"{"loader":"home","node":"b"}"#)
        await group.stop()
        // Stopping gave the lease back: the key is gone at once.
        #expect(try await a.leases.get("loader.home") == nil)
        await a.close()
        await b.close()
    }

    /// Before: a frozen server (SIGSTOP) cost the node its lease while `/readyz` still said ready
    /// (two missed pings 20 s apart, 60 s). Now the failed renewal makes the node not ready before
    /// the loss is published, and the connection pings often enough to be found stale within
    /// the lease's TTL.
    /// The order needs no time bound: a frozen server answers nothing, so the lease can only be
    /// lost through a renewal that failed without an answer once the TTL ran out, and that
    /// renewal marks the node not ready before the lease sees its error. So readiness read as the
    /// loss is published must be "not ready", however slow the machine. (Whether the connection
    /// is found stale before or after the loss is a matter of real time, and is not asserted.)
    @Test func aFrozenServerMakesTheNodeNotReadyAndLosesItsLease() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let settings = ClusterTestSettings.make([server.url], node: "a", leaseTTL: .seconds(3))
        let bus = EventBus()
        let clock = ContinuousClock()
        let connection = ClusterConnectionService(settings: settings, connector: NATSClusterBackend.connect, bus: bus, clock: clock)
        // Read on the publisher, as the loss is published: what /readyz would have said then.
        let readinessAtLoss = FirstValue<String>()
        let watch = try bus.subscribe(to: ClusterLeaseChanged.self) { change in
            if change.change == .lost { readinessAtLoss.keep(connection.notConnectedReason ?? "ready") }
        }
        let log = try EventRecorder(bus: bus, matching: "cluster.>")
        let group = await RunningGroup([
            .init("cluster.connection", connection),
            .init("loaders.home", DeferredService {
                let backend = try #require(connection.backend)
                return LeasedLoaderService(lease: LoaderLease(loader: "home", node: "a", ttl: .seconds(3), bucket: backend.leases, clock: clock),
                                           states: backend.states, ledger: nil, bus: bus, clock: clock,
                                           makeLoader: { _ in IdleLoader(id: "home") }, makeSchedule: { _ in IdleSchedule() })
            }),
        ])
        await log.first(ClusterLeaseChanged.self) { $0.change == .acquired }
        #expect(connection.notConnectedReason == nil)

        server.freeze()
        await log.first(ClusterLeaseChanged.self) { $0.change == .lost }
        let atLoss = readinessAtLoss.value
        #expect(atLoss != nil && atLoss != "ready", "/readyz when the lease was lost: \(atLoss ?? "not read")")
        await log.first(ClusterConnectionChanged.self) { $0.kind == .disconnected }
        #expect(connection.notConnectedReason != nil)
        server.thaw()
        await group.stop()
        watch.cancel()
    }

    @Test func anIntentIsAcknowledgedOnlyAfterTheServiceAnsweredAndRecorded() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a", ackWait: .seconds(30)))
        let service = CountingPostService(holding: true)
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let group = await RunningGroup([.init("posts", Self.worker(a, service, bus: bus))])
        let stored = await a.publisher.publish([try Self.message(Self.intent("todo:1"), node: "a")])
        #expect(try stored.first?.get().stream == "HERALD_POSTS")

        await service.waitUntilCalled()
        // The service has not answered: the intent is still in the queue, held by this node.
        #expect(try await a.jetStream.streamInfo("HERALD_POSTS").state.messages == 1)
        #expect(try await a.jetStream.consumerInfo(stream: "HERALD_POSTS", consumer: "herald-posters").numAckPending == 1)
        service.answer()
        let sent = await log.first(PostSent.self)
        #expect(sent?.key == "todo:1" && sent?.id == "post-1" && sent?.duplicate == false)
        #expect(try await Self.postQueueEmpties(a))
        let record = try await a.states.get(ClusterPostWorker<ContinuousClock>.recordKey("todo:1"))
        #expect(record.map { String(decoding: $0.value, as: UTF8.self) } == #"{"id":"post-1","key":"todo:1","node":"a","result":"sent"}"#)
        #expect(service.calls.map(\.mayExist) == [false])
        await group.stop()
        await a.close()
    }

    @Test func anIntentLeftUnacknowledgedByAKilledNodeIsDeliveredAgainAfterTheAckWaitAndPostedOnce() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a", ackWait: .seconds(1)))
        let service = CountingPostService()
        _ = await a.publisher.publish([try Self.message(Self.intent("todo:7"), node: "a")])
        // A repeat within the dedupe window (the item announced again) is stored once.
        let repeated = await a.publisher.publish([try Self.message(Self.intent("todo:7"), node: "b")])
        #expect(try repeated.first?.get().duplicate == true)

        // "Node k" pulls the intent, posts, and dies before it acknowledges.
        let pulled = try await a.jetStream.fetch(stream: "HERALD_POSTS", consumer: "herald-posters", batch: 1, expires: .seconds(5))
        #expect(pulled.count == 1 && pulled.first?.metadata.deliveries == 1)
        _ = try await service.post(Self.intent("todo:7"), mayExist: false, progress: { _ in })

        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let group = await RunningGroup([.init("posts", Self.worker(a, service, bus: bus))])
        let sent = await log.first(PostSent.self)
        #expect(sent?.key == "todo:7" && sent?.id == "post-1")
        #expect(service.posts == ["todo:7": "post-1"])
        #expect(service.calls.map(\.mayExist) == [false, true])
        #expect(try await Self.postQueueEmpties(a))
        await group.stop()
        await a.close()
    }

    @Test func anIntentWhosePostIsRecordedIsAcknowledgedAsADuplicateWithoutPostingAgain() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a"))
        _ = try await a.states.create(ClusterPostWorker<ContinuousClock>.recordKey("todo:9"),
                                      value: Array(#"{"id":"post-41","key":"todo:9","node":"c","result":"sent"}"#.utf8))
        let service = CountingPostService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let group = await RunningGroup([.init("posts", Self.worker(a, service, bus: bus))])
        _ = await a.publisher.publish([try Self.message(Self.intent("todo:9"), node: "c")])
        let sent = await log.first(PostSent.self)
        #expect(sent?.id == "post-41" && sent?.duplicate == true)
        #expect(service.calls.isEmpty)
        await group.stop()
        await a.close()
    }

    /// An intent larger than the node takes, stored before the post queue had its limit (made by
    /// an older Herald), is passed over unread, refused once (`cluster.post.refused`) and
    /// terminated; the next one is posted and the connection stays. Before: the connection was
    /// dropped at the message, and again at every delivery after the ack wait.
    @Test func anOversizedIntentStoredBeforeTheLimitIsRefusedOnceAndTheNextIsPosted() async throws {
        let server = try await NATSHostileInputTests.serverWithLargerPayloads()
        defer { Task { await server.stop() } }
        var settings = ClusterTestSettings.make([server.url], node: "a", ackWait: .seconds(2))
        settings.maxPayload = 1024 * 1024
        let a = try await NATSClusterBackend.open(settings)
        var unlimited = try await a.jetStream.streamInfo("HERALD_POSTS").config
        unlimited.maxMessageSize = -1
        _ = try await a.jetStream.updateStream(unlimited)
        let service = CountingPostService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: ">")
        let reports = Task { for await report in a.reports { _ = try? await bus.publish(report, from: "cluster") } }
        let group = await RunningGroup([.init("posts", Self.worker(a, service, bus: bus))])

        let size = 1536 * 1024
        let raw = try #require(RawClient(port: server.port))
        raw.send("CONNECT {\"headers\":true,\"verbose\":false,\"protocol\":1}\r\n")
        raw.send("PUB herald-posts.todo \(size)\r\n" + String(repeating: "a", count: size) + "\r\nPING\r\n")
        _ = await raw.read { $0.contains("PONG") }
        _ = await a.publisher.publish([try Self.message(Self.intent("todo:after-big"), node: "a")])
        #expect(await log.first(PostSent.self)?.key == "todo:after-big")
        let refused = log.events(ClusterPostRefused.self)
        #expect(refused.count == 1 && refused.first?.bytes == size && refused.first?.reason.contains("passed over") == true, "\(refused)")
        #expect(!log.events(ClusterConnectionChanged.self).contains { $0.kind == .disconnected })
        #expect(try await Self.postQueueEmpties(a))
        #expect(service.calls.map(\.key) == ["todo:after-big"])
        await group.stop()
        reports.cancel()
        await a.close()
    }

    @Test func anIntentNotSignedWithTheClusterSecretIsRefusedAndNeverPostedAndOneSignedWithAnotherIsLeftForItsNode() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a", ackWait: .seconds(2)))
        let service = CountingPostService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: ">")
        let group = await RunningGroup([.init("posts", Self.worker(a, service, bus: bus))])

        // What anyone on the NATS account can publish: an intent as a node writes it, unsigned,
        // and signed but altered on the way; and one from a node configured with another secret.
        let genuine = try Self.message(Self.intent("todo:forged-0"), node: "a")
        var unsigned = genuine
        unsigned.headers.removeAll { $0.name == IntentAuthenticator.header }
        unsigned.headers = unsigned.headers.map { $0.name == "Nats-Msg-Id" ? .init($0.name, "todo:forged-1") : $0 }
        let otherAuthenticator = try IntentAuthenticator(secret: String(repeating: "another-secret-", count: 3))
        let otherSecret = try ClusterPostIntake<ContinuousClock>.message(for: Self.intent("todo:other-secret"), node: "b", signedBy: otherAuthenticator)
        var altered = try Self.message(Self.intent("todo:forged-3"), node: "a")
        altered.payload = Array(String(decoding: altered.payload, as: UTF8.self).replacingOccurrences(of: "hello", with: "spam!").utf8)
        for message in [unsigned, otherSecret, altered] {
            #expect(try await a.publisher.publish([message]).first?.get().stream == "HERALD_POSTS")
        }
        // A signed intent after them: once it is sent, the three before it were handled.
        _ = await a.publisher.publish([try Self.message(Self.intent("todo:genuine"), node: "a")])
        let sent = await log.first(PostSent.self)
        #expect(sent?.key == "todo:genuine")
        let refused = log.events(ClusterPostRefused.self)
        #expect(Array(refused.map(\.key).prefix(3)) == ["todo:forged-1", "todo:other-secret", "todo:forged-3"])
        #expect(refused.first?.reason.contains("not signed") == true)
        #expect(refused.dropFirst().first?.reason.contains("another intent secret (key \(otherAuthenticator.keyID)") == true)
        #expect(refused.dropFirst(2).first?.reason.contains("altered or forged") == true)
        #expect(service.calls.map(\.key) == ["todo:genuine"])
        #expect(log.events(PostFailed.self).isEmpty)
        await group.stop()

        // The forged and altered ones are terminated; the other secret's is left for its node,
        // which posts it once this node is gone.
        let otherService = CountingPostService()
        let otherBus = EventBus()
        let otherLog = try EventRecorder(bus: otherBus, matching: "post.>")
        let b = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "b", ackWait: .seconds(2)))
        let otherWorker = ClusterPostWorker(name: "posts", rules: [Self.rule], services: ["svc": otherService], consumer: b.intents, records: b.states,
                                            bus: otherBus, node: "b", authenticator: otherAuthenticator,
                                            retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3), ackWait: .seconds(2), clock: ContinuousClock())
        let otherGroup = await RunningGroup([.init("posts", otherWorker)])
        #expect(await otherLog.first(PostSent.self)?.key == "todo:other-secret")
        #expect(otherService.calls.map(\.key) == ["todo:other-secret"])
        #expect(try await Self.postQueueEmpties(b))
        await otherGroup.stop()
        await a.close()
        await b.close()
    }
}
