import Foundation
import Herald
import HeraldCluster
import HeraldNATS
import HeraldServices
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// A post service that has every status already: each request is the Twitter-style refusal of a
/// duplicate (code 187), and it remembers what each request was told.
final class DuplicateEverythingService: PostService {
    private let told = SyncLock<[Bool]>([])

    /// `mayExist` of each request, in order.
    var requests: [Bool] { told.withLock { $0 } }

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        told.withLock { $0.append(mayExist) }
        throw ServiceError(kind: .httpStatus, message: "Status is a duplicate.", status: 403, apiErrors: [.init(code: 187, message: "Status is a duplicate.")])
    }
}

/// A bucket that refuses to create keys while it is closed (a state bucket electing a leader),
/// counting the refusals; everything else goes to the real bucket.
final class ClosedBucket: ClusterKeyValue {
    let base: any ClusterKeyValue
    private let state = SyncLock<(open: Bool, refused: Int)>((false, 0))
    /// Opens at the third refusal.
    let refusedThrice = Gate()

    init(_ base: any ClusterKeyValue) { self.base = base }

    var name: String { base.name }
    var refused: Int { state.withLock { $0.refused } }
    func open() { state.withLock { $0.open = true } }

    func get(_ key: String) async throws(ClusterError) -> ClusterKeyValueEntry? { try await base.get(key) }
    func create(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64 {
        let (open, refused) = state.withLock { state -> (Bool, Int) in
            if !state.open { state.refused += 1 }
            return (state.open, state.refused)
        }
        if refused == 3 { refusedThrice.open() }
        guard open else { throw ClusterError.unavailable("the bucket has no leader (test)") }
        return try await base.create(key, value: value)
    }
    func update(_ key: String, value: [UInt8], expectedRevision: UInt64) async throws(ClusterError) -> UInt64 {
        try await base.update(key, value: value, expectedRevision: expectedRevision)
    }
    func delete(_ key: String, expectedRevision: UInt64) async throws(ClusterError) { try await base.delete(key, expectedRevision: expectedRevision) }
}

/// Found by the nemesis: an intent can reach a node as a first delivery after another node
/// posted it and could not write its `post.` record (a post consumer made again starts its
/// delivery counts over; an intent stored again after the post stream lost its dedupe window is
/// a new message). The node then took the service's duplicate refusal for another item's text
/// and reported `post.<rule>.failed`. Every sender now marks its attempt in the state bucket
/// before its first request, and a mark already there means the post may exist.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct PostWorkerAttemptMarkTests {
    struct Node {
        let backend: NATSClusterBackend
        let bus = EventBus()
        let log: EventRecorder
        let group: RunningGroup
        let service: DuplicateEverythingService
        let authenticator: IntentAuthenticator
    }

    static let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: try! PostTemplate("x"), media: nil))

    func start(_ server: NATSServerProcess, node: String, records: ((any ClusterKeyValue) -> any ClusterKeyValue)? = nil) async throws -> Node {
        let backend = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: node, ackWait: .seconds(30)))
        let authenticator = try IntentAuthenticator(secret: String(repeating: "cluster-secret.", count: 3))
        let service = DuplicateEverythingService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let worker = ClusterPostWorker(name: "posts", rules: [Self.rule], services: ["svc": service], consumer: backend.intents,
                                       records: records?(backend.states) ?? backend.states, bus: bus, node: node, authenticator: authenticator,
                                       retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3),
                                       ackWait: backend.settings.ackWait, clock: ContinuousClock())
        let group = await RunningGroup([.init("posts", worker)])
        return Node(backend: backend, log: log, group: group, service: service, authenticator: authenticator)
    }

    func queue(_ key: String, on node: Node) async throws {
        let intent = PostIntent(key: key, rule: "todo", service: "svc", content: .status(text: "hello", media: nil), correlation: nil, created: Date())
        _ = await node.backend.publisher.publish([try ClusterPostIntake<ContinuousClock>.message(for: intent, node: "a", signedBy: node.authenticator)])
    }

    func stop(_ node: Node) async {
        await node.group.stop()
        await node.backend.close()
    }

    @Test func aFirstDeliveryOfAKeyAnotherNodeBeganToSendIsADuplicateSentNotAFailure() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let b = try await start(server, node: "b")
        // Node a marked the key, posted it and was cut off before it could write its record.
        let mark = #"{"key":"todo:7","node":"a"}"#
        _ = try await b.backend.states.create(ClusterPostWorker<ContinuousClock>.attemptKey("todo:7"), value: Array(mark.utf8))
        try await queue("todo:7", on: b)

        await b.log.wait { $0.contains { $0.event is PostSent || $0.event is PostFailed } }
        let sent = b.log.events(PostSent.self).first
        #expect(sent?.key == "todo:7" && sent?.duplicate == true)
        #expect(b.log.events(PostFailed.self).isEmpty)
        // A first delivery, told that the post may exist because of the mark alone.
        #expect(b.service.requests == [true])
        // Node a's mark stays as it was; b's record says sent.
        #expect(try await b.backend.states.get(ClusterPostWorker<ContinuousClock>.attemptKey("todo:7")).map { String(decoding: $0.value, as: UTF8.self) } == mark)
        let record = try await b.backend.states.get(ClusterPostWorker<ContinuousClock>.recordKey("todo:7"))
        #expect(record.map { String(decoding: $0.value, as: UTF8.self) }?.contains(#""result":"sent""#) == true)
        await stop(b)
    }

    @Test func aFirstAttemptAnywhereStillTakesADuplicateForAnotherItemsTextAndLeavesItsMark() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let b = try await start(server, node: "b")
        try await queue("todo:8", on: b)

        await b.log.wait { $0.contains { $0.event is PostSent || $0.event is PostFailed } }
        let failed = b.log.events(PostFailed.self).first
        #expect(failed?.key == "todo:8" && failed?.reason.contains("a different item posted it") == true)
        #expect(b.log.events(PostSent.self).isEmpty)
        #expect(b.service.requests == [false])
        let mark = try await b.backend.states.get(ClusterPostWorker<ContinuousClock>.attemptKey("todo:8"))
        #expect(mark.map { String(decoding: $0.value, as: UTF8.self) } == #"{"key":"todo:8","node":"b"}"#)
        await stop(b)
    }

    @Test func noRequestIsSentUntilTheAttemptIsMarked() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let bucket = SyncLock<ClosedBucket?>(nil)
        let b = try await start(server, node: "b") { base in
            let closed = ClosedBucket(base)
            bucket.withLock { $0 = closed }
            return closed
        }
        let closed = try #require(bucket.withLock { $0 })
        try await queue("todo:9", on: b)

        // Three refused marks in a row (100, 200, 400 ms apart), and no request meanwhile.
        await closed.refusedThrice.wait()
        #expect(b.service.requests.isEmpty)
        closed.open()
        await b.log.wait { $0.contains { $0.event is PostSent || $0.event is PostFailed } }
        #expect(b.service.requests == [false])
        #expect(try await b.backend.states.get(ClusterPostWorker<ContinuousClock>.attemptKey("todo:9")) != nil)
        await stop(b)
    }
}
