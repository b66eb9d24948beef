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

/// A post service whose first answer waits until the test lets it go, then is the Twitter-style
/// refusal of a duplicate status (code 187): what a node paused past the ack wait meets when
/// another node posted the intent meanwhile.
private final class LateDuplicateService: PostService {
    private let state = SyncLock<(calls: Int, held: CheckedContinuation<Void, Never>?, released: Bool)>((0, nil, false))
    private let called = SyncLock<[CheckedContinuation<Void, Never>]>([])

    var calls: Int { state.withLock { $0.calls } }

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        state.withLock { $0.calls += 1 }
        for waiter in called.withLock({ waiters in defer { waiters = [] }; return waiters }) { waiter.resume() }
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                if state.released { return true }
                state.held = continuation
                return false
            }
            if go { continuation.resume() }
        }
        throw ServiceError(kind: .httpStatus, message: "Status is a duplicate.", status: 403, apiErrors: [.init(code: 187, message: "Status is a duplicate.")])
    }

    func waitUntilCalled() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { $0.calls > 0 }
            if now { continuation.resume() } else { called.withLock { $0.append(continuation) } }
        }
    }

    func answer() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.released = true
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }
}

@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct PostWorkerLateAttemptTests {
    /// Found by the nemesis (a node paused while it held an intent): its late attempt met the post
    /// another node made after the ack wait, reported `post.<rule>.failed` and overwrote that
    /// node's record with "failed".
    @Test func aLateAttemptMeetingThePostAnotherNodeRecordedIsADuplicateSentAndLeavesTheRecord() async throws {
        let server = try await NATSServerProcess.start()
        defer { Task { await server.stop() } }
        let a = try await NATSClusterBackend.open(ClusterTestSettings.make([server.url], node: "a", ackWait: .seconds(30)))
        let secret = String(repeating: "cluster-secret.", count: 3)
        let authenticator = try IntentAuthenticator(secret: secret)
        let rule = PostRule(name: "todo", on: "orders.>", service: "svc", target: .status(text: try PostTemplate("x"), media: nil))
        let service = LateDuplicateService()
        let bus = EventBus()
        let log = try EventRecorder(bus: bus, matching: "post.>")
        let worker = ClusterPostWorker(name: "posts", rules: [rule], services: ["svc": service], consumer: a.intents, records: a.states, bus: bus,
                                       node: "a", authenticator: authenticator, retry: .init(initial: .milliseconds(50), maximum: .seconds(1), attempts: 3),
                                       ackWait: a.settings.ackWait, clock: ContinuousClock())
        let group = await RunningGroup([.init("posts", worker)])
        let intent = PostIntent(key: "todo:5", rule: "todo", service: "svc", content: .status(text: "hello", media: nil), correlation: nil, created: Date())
        _ = await a.publisher.publish([try ClusterPostIntake<ContinuousClock>.message(for: intent, node: "a", signedBy: authenticator)])

        await service.waitUntilCalled()
        // Meanwhile node c was given the intent, posted it and recorded it.
        let key = ClusterPostWorker<ContinuousClock>.recordKey("todo:5")
        let recorded = #"{"id":"post-77","key":"todo:5","node":"c","result":"sent"}"#
        _ = try await a.states.put(key, value: Array(recorded.utf8))
        service.answer()

        // The outcome, whichever it is.
        await log.wait { $0.contains { $0.event is PostSent || $0.event is PostFailed } }
        let sent = log.events(PostSent.self).first
        #expect(sent?.key == "todo:5" && sent?.duplicate == true && sent?.id == "post-77")
        #expect(log.events(PostFailed.self).isEmpty)
        #expect(try await a.states.get(key).map { String(decoding: $0.value, as: UTF8.self) } == recorded)
        #expect(service.calls == 1)
        await group.stop()
        await a.close()
    }
}
