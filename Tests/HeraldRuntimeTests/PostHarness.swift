import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldTestSupport
import Synchronization
import HeraldIO
import HeraldSync

/// Records envelopes and lets a test await a condition on them, with a generous bound and
/// without sleeping.
final class EnvelopeRecorder: Sendable {
    private struct Waiter {
        var predicate: @Sendable ([Envelope<any Event>]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var envelopes: [Envelope<any Event>] = []
        var waiters: [UUID: Waiter] = [:]
    }

    private let state = SyncLock(State())

    var envelopes: [Envelope<any Event>] { state.withLock { $0.envelopes } }
    var topics: [String] { envelopes.map(\.topic.name) }

    func events<E: Event>(_ type: E.Type) -> [E] { envelopes.compactMap { $0.event as? E } }

    func record(_ envelope: Envelope<any Event>) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.envelopes.append(envelope)
            let done = state.waiters.filter { $0.value.predicate(state.envelopes) }
            for key in done.keys { state.waiters[key] = nil }
            return done.values.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Waits until `predicate` holds for what was recorded; false after `bound`.
    func wait(bound: Duration = .seconds(300), until predicate: @escaping @Sendable ([Envelope<any Event>]) -> Bool) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let holds = state.withLock { state -> Bool in
                if predicate(state.envelopes) { return true }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return false
            }
            if holds {
                continuation.resume(returning: true)
                return
            }
            let (seconds, attoseconds) = bound.components
            DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { [self] in
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(returning: false)
            }
        }
    }

    /// Waits until `count` events of `type` were recorded.
    func wait<E: Event>(for count: Int, _ type: E.Type) async -> Bool {
        await wait { envelopes in envelopes.filter { $0.event is E }.count >= count }
    }
}

/// A sandbox, a bus, a manual clock and a state directory for post scheduler tests.
struct PostHarness {
    let sandbox: Sandbox
    let bus: EventBus
    let clock: ManualClock
    let start: Date
    let directory: URL
    let recorder: EnvelopeRecorder
    let transport = SchemeRoutingTransport(defaultTimeout: .seconds(120))

    static func run<T>(start: Date = Date(), _ configure: (inout SandboxConfiguration) -> Void = { _ in },
                       _ body: (PostHarness) async throws -> T) async throws -> T {
        var configuration = SandboxConfiguration()
        configure(&configuration)
        let sandbox = try await Sandbox.start(configuration)
        let bus = EventBus()
        let recorder = EnvelopeRecorder()
        let subscription = try bus.subscribe(matching: "post.>", delivery: .inline) { recorder.record($0) }
        let uploads = try bus.subscribe(matching: "upload.>", delivery: .inline) { recorder.record($0) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-post-\(UUID().uuidString)")
        let harness = PostHarness(sandbox: sandbox, bus: bus, clock: ManualClock(), start: start, directory: directory,
                                  recorder: recorder)
        defer {
            subscription.cancel()
            uploads.cancel()
            try? FileManager.default.removeItem(at: directory)
        }
        do {
            let result = try await body(harness)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop()
            throw error
        }
    }

    var outboxPath: String { directory.appendingPathComponent("outbox/posts.jsonl").path }

    /// The wall clock as the manual clock moves it.
    var now: @Sendable () -> Date {
        let (clock, start) = (clock, start)
        return { start.addingTimeInterval(Double(clock.now.offset.components.seconds) + Double(clock.now.offset.components.attoseconds) / 1e18) }
    }

    func twitter(_ credentials: OAuthCredentials? = nil) -> TwitterClient {
        let sandboxCredentials = sandbox.configuration.credentials
        return TwitterClient(
            baseURL: sandbox.baseURL,
            credentials: credentials ?? OAuthCredentials(
                consumerKey: sandboxCredentials.consumerKey, consumerSecret: sandboxCredentials.consumerSecret,
                token: sandboxCredentials.token, tokenSecret: sandboxCredentials.tokenSecret),
            transport: transport, clock: clock)
    }

    func baas() -> BaaSClient {
        let configuration = sandbox.configuration
        return BaaSClient(configuration: BaaSConfiguration(
            endpoint: sandbox.baseURL, tenantID: configuration.baasTenant, applicationID: configuration.baasApplicationID,
            applicationKey: configuration.baasApplicationKey), transport: transport)
    }

    func scheduler(_ rules: [PostRule], services: [String: any PostService]? = nil, retry: PostScheduler.RetryPolicy = .init(),
                   faultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)? = nil,
                   write: PostOutbox.Write? = nil) -> PostScheduler {
        let services = services ?? ["twitter": TwitterPostService(client: twitter(), baseDirectory: directory), "baas": BaaSPostService(client: baas())]
        guard let write else {
            return PostScheduler(name: "posts", rules: rules, services: services, outboxPath: outboxPath,
                                 io: BlockingIOThread(name: "test.posts-io"), retry: retry, clock: clock, now: now, faultHook: faultHook)
        }
        return PostScheduler(name: "posts", rules: rules, services: services, outbox: PostOutbox(path: outboxPath, write: write, io: BlockingIOThread(name: "test.posts-io")),
                             retry: retry, clock: clock, now: now, faultHook: faultHook)
    }

    /// Publishes `event` as the todo loader would (its sender is part of item keys).
    @discardableResult
    func announce<E: Event>(_ event: E) async throws -> EventID {
        try await bus.publish(event, from: "loader.todos")
    }

    /// A todo loader's finished event with these new todos (descriptions), ids `t1`, `t2`, ….
    static func todos(_ descriptions: [String], loader: String = "todos", firstID: Int = 1) -> TodosLoaded {
        let objects = descriptions.enumerated().map { index, text in
            BaaSObject(id: "t\(firstID + index)", fields: ["description": .string(text), "done": .bool(false)])
        }
        return TodosLoaded(loader: loader, bucket: "todos", todos: objects, newTodos: objects, removedIDs: [])
    }

    static func rule(_ name: String = "tweet", text: String = "New todo: {{description}}", on: TopicPattern = "loader.todos.finished",
                     conditions: [PostCondition] = [], rate: PostRate? = nil, quiet: QuietHours? = nil,
                     media: MediaSource? = nil) throws -> PostRule {
        PostRule(name: name, on: on, scope: .newItems, conditions: conditions, service: "twitter",
                 target: .status(text: try PostTemplate(text), media: media), rate: rate, quiet: quiet)
    }
}
