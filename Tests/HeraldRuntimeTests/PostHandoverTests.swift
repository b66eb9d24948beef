import Foundation
import Herald
import HeraldIO
import HeraldLifecycle
import HeraldLoaders
import HeraldSandbox
import HeraldStatus
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
@testable import HeraldRuntime

/// A reload that replaces a post subscriber misses none of the events published while it does:
/// each makes exactly one post, whether the old scheduler, the handover or the new one took it.
@Suite struct PostHandoverTests {
    /// An event shaped like a loader's, with a field the rule's template reads.
    struct Finished: Event, Hashable {
        var topic: Topic { "loader.todos.finished" }
        var loader = "todos"
        /// The event's number (a field todo events have, so the config accepts the template).
        var bucket: String
    }

    static func configuration(_ directory: URL, sandbox: URL, text: String) throws -> HeraldConfiguration {
        let json = """
            {"state": "state",
             "services": {"baas": {"url": "\(sandbox.absoluteString)", "tenant": "sandbox-tenant", "appId": "sandbox-app-id", "appKey": "sandbox-app-key"}},
             "loaders": {"todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}},
             "subscribers": {"posts": {"kind": "post", "rules": {
               "copy": {"on": "loader.todos.finished", "for": "event", "service": "baas", "bucket": "copies",
                        "fields": {"note": "\(text) {{bucket}}"}}}}}}
            """
        return try ConfigLoader(environment: [:]).parse(Data(json.utf8), baseDirectory: directory)
    }

    @Test(.timeLimit(.minutes(5)))
    func eventsPublishedWhileAPostSubscriberIsReplacedEachMakeOnePost() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-handover-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await Sandbox.start()
        let old = try Self.configuration(directory, sandbox: sandbox.baseURL, text: "old")
        let new = try Self.configuration(directory, sandbox: sandbox.baseURL, text: "new")
        let bus = EventBus()
        let sent = SyncLock(Set<String>())
        let allSent = HeraldTestSupport.Gate()
        let published = SyncLock(0)
        let publishing = SyncLock(true)
        // Done once every event published made its post (one lost would leave this closed, and
        // the test fails at its time limit).
        @Sendable func checkDone() {
            guard !publishing.withLock({ $0 }) else { return }
            if sent.withLock({ $0.count }) >= published.withLock({ $0 }) { allSent.open() }
        }
        // A post the old scheduler finished as it stopped is journaled as sent, but its
        // post.<rule>.sent is not published (the scheduler has let go of the bus by then): such
        // keys are read from the journal once the old scheduler is gone.
        let journal = directory.appendingPathComponent("state/outbox/posts.jsonl")
        @Sendable func doneInJournal() async throws -> Set<String> {
            try await onDedicatedThread {
                let text = (try? String(contentsOf: journal, encoding: .utf8)) ?? ""
                return Set(text.split(separator: "\n").compactMap { line -> String? in
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                          object["op"] as? String == "done" else { return nil }
                    return object["key"] as? String
                })
            }
        }
        let watch = try bus.subscribe(to: PostSent.self) { post in
            sent.withLock { _ = $0.insert(post.key) }
            checkDone()
        }
        defer { watch.cancel() }
        let runtime = DaemonRuntime(daemon: HeraldDaemon(configuration: old), bus: bus,
                                    store: LoaderStateStore(directory: directory.appendingPathComponent("state"), io: BlockingIOThread(name: "test.state-io")),
                                    sandbox: nil, sources: StatusSources(bus: bus))
        guard case .post(let posting)? = old.subscribers["posts"] else { Issue.record("no post subscriber"); return }
        runtime.posters.addAtStart(runtime.posterMember("posts", posting))
        let started = HeraldTestSupport.Gate()
        let group = ServiceGroup([.init("posts", runtime.posters)], clock: ContinuousClock()) { event in
            if event == .started { started.open() }
        }
        let running = Task { try await group.run() }
        await started.wait()

        // Events before, while the post subscriber is replaced (no scheduler runs then), and after.
        let number = SyncLock(0)
        @Sendable func publish(_ count: Int) {
            for _ in 0..<count {
                let next = number.withLock { value -> Int in
                    value += 1
                    return value
                }
                _ = try? bus.post(Finished(bucket: String(next)), from: Sender("loader.todos"))
            }
            published.withLock { $0 = number.withLock { $0 } }
        }
        publish(3)
        runtime.whileReplaced.withLock { $0 = { publish(3) } }
        let applied = await runtime.apply(new)
        let doneByTheOld = try await doneInJournal()
        sent.withLock { $0.formUnion(doneByTheOld) }
        publish(3)
        publishing.withLock { $0 = false }
        #expect(applied.changes == ["subscribers.posts: changed"])
        #expect(applied.errors.isEmpty, "\(applied.errors)")
        checkDone()
        await allSent.wait()
        let total = published.withLock { $0 }
        #expect(sent.withLock { $0.count } == total)
        // One object per event in the service: none lost, none twice.
        var notes: [Int] = []
        for object in sandbox.objects(inBucket: "copies") {
            let fields = try JSONSerialization.jsonObject(with: Data(object.json.utf8)) as? [String: Any]
            let note = fields?["note"] as? String ?? ""
            if let number = Int(note.split(separator: " ").last.map(String.init) ?? "") { notes.append(number) }
        }
        #expect(notes.count == total, "\(notes.count) posts for \(total) events")
        #expect(Set(notes).count == total)
        running.cancel()
        try await running.value
        await sandbox.stop()
    }
}
