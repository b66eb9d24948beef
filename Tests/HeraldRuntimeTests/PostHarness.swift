import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldTestSupport
import HeraldTesting
import Synchronization
import HeraldIO
import HeraldSync

extension EventRecorder {
    /// Waits until `count` events of `type` were recorded.
    func wait<E: Event>(for count: Int, _ type: E.Type) async -> Bool {
        await wait { envelopes in envelopes.filter { $0.event is E }.count >= count }
    }
}

/// A sandbox, a bus, a manual clock and a state directory for post scheduler tests.
struct PostHarness {
    let base: SandboxHarness
    let bus: EventBus
    let start: Date
    let directory: URL
    let recorder: EventRecorder

    var sandbox: Sandbox { base.sandbox }
    var clock: ManualClock { base.clock }
    var transport: any HTTPTransport { base.transport }

    /// The sandbox runs on the real date; the scheduler and the clients on a manual clock.
    static func run<T>(start: Date = Date(), _ configure: (inout SandboxConfiguration) -> Void = { _ in },
                       _ body: (PostHarness) async throws -> T) async throws -> T {
        let bus = EventBus()
        let recorder = EventRecorder()
        let subscription = try bus.subscribe(matching: "post.>", delivery: .inline) { recorder.record($0) }
        let uploads = try bus.subscribe(matching: "upload.>", delivery: .inline) { recorder.record($0) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-post-\(UUID().uuidString)")
        defer {
            subscription.cancel()
            uploads.cancel()
            try? FileManager.default.removeItem(at: directory)
        }
        return try await SandboxHarness.run(configure, sandboxFollowsTime: false, clock: ManualClock()) { base in
            try await body(PostHarness(base: base, bus: bus, start: start, directory: directory, recorder: recorder))
        }
    }

    var outboxPath: String { directory.appendingPathComponent("outbox/posts.jsonl").path }

    /// The wall clock as the manual clock moves it.
    var now: @Sendable () -> Date {
        let (clock, start) = (clock, start)
        return { start.addingTimeInterval(Double(clock.now.offset.components.seconds) + Double(clock.now.offset.components.attoseconds) / 1e18) }
    }

    func twitter(_ credentials: OAuthCredentials? = nil) -> TwitterClient { base.twitter(credentials: credentials) }

    func baas() -> BaaSClient { base.baas() }

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
