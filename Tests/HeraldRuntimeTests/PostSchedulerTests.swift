import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldTestSupport
import Synchronization
import Testing
import HeraldSync
import HeraldIO

/// A post service that answers from a script (errors, then ids), recording each call.
final class ScriptedPostService: PostService {
    private let script: SyncLock<[Result<String, ServiceError>]>
    private let calls = SyncLock<[(key: String, mayExist: Bool)]>([])

    init(_ script: [Result<String, ServiceError>]) {
        self.script = SyncLock(script)
    }

    var recorded: [(key: String, mayExist: Bool)] { calls.withLock { $0 } }

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        calls.withLock { $0.append((intent.key, mayExist)) }
        let next = script.withLock { $0.isEmpty ? .success("id-\(intent.key)") : $0.removeFirst() }
        return try next.get()
    }
}

/// A post service whose requests never finish until cancelled (a daemon stopped mid-post);
/// `entered` fires when a request has started.
final class HangingPostService: PostService {
    private let state = SyncLock<(entered: Bool, waiter: CheckedContinuation<Void, Never>?, hung: CheckedContinuation<Void, Never>?, cancelled: Bool)>(
        (false, nil, nil, false))

    func post(_ intent: PostIntent, mayExist: Bool, progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> String {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (hung: CheckedContinuation<Void, Never>) in
                let (waiter, resumeNow) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
                    state.entered = true
                    state.hung = hung
                    defer { state.waiter = nil }
                    return (state.waiter, state.cancelled)
                }
                waiter?.resume()
                if resumeNow { cancel() }
            }
        } onCancel: {
            cancel()
        }
        throw CancellationError()
    }

    private func cancel() {
        let hung = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.cancelled = true
            defer { state.hung = nil }
            return state.hung
        }
        hung?.resume()
    }

    /// Returns once a request has started.
    func entered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state -> Bool in
                if state.entered { return true }
                state.waiter = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct PostSchedulerTests {
    static func httpError(_ status: Int, code: Int? = nil) -> ServiceError {
        ServiceError(kind: .httpStatus, message: "HTTP \(status)", status: status,
                     apiErrors: code.map { [APIErrorDetail(code: $0, message: "scripted")] } ?? [])
    }

    @Test func eachNewItemIsPostedOnceWithTheTriggeringCorrelation() async throws {
        try await PostHarness.run { harness in
            let scheduler = harness.scheduler([try PostHarness.rule()])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            let first = try await harness.announce(PostHarness.todos(["buy milk", "call mom"]))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: buy milk", "New todo: call mom"])
            let sent = harness.recorder.events(PostSent.self)
            #expect(sent.map(\.key) == ["tweet:item:loader.todos:t1", "tweet:item:loader.todos:t2"])
            #expect(sent.allSatisfy { $0.correlation == first.description && $0.attempts == 1 && !$0.duplicate && $0.id != nil })
            #expect(harness.recorder.envelopes.allSatisfy { $0.correlationID == first })
            #expect(harness.recorder.topics == ["post.tweet.sent", "post.tweet.sent"])

            // The same items announced again (a loader restarted from old state) are not posted again.
            try await harness.announce(PostHarness.todos(["buy milk", "call mom", "water plants"]))
            #expect(await harness.recorder.wait(for: 3, PostSent.self))
            #expect(harness.sandbox.posts().count == 3)
            await running.stop()

            // Nor by a new scheduler on the same outbox.
            let restarted = harness.scheduler([try PostHarness.rule()])
            let restartedRunning = await RunningGroup("restarted", restarted.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["buy milk", "call mom", "water plants"]))
            #expect(restarted.pendingCount == 0)
            try await harness.announce(PostHarness.todos(["feed cat"], firstID: 4))
            #expect(await harness.recorder.wait(for: 4, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text).last == "New todo: feed cat")
            #expect(harness.sandbox.posts().count == 4)
            // Posts go in order per rule, so a re-post would have come before "feed cat".
            #expect(harness.recorder.events(PostSent.self).count == 4)
            #expect(harness.recorder.events(PostSent.self).allSatisfy { !$0.duplicate })
            await restartedRunning.stop()
        }
    }

    @Test func conditionsSelectItemsAndAMissingFieldFailsThePost() async throws {
        try await PostHarness.run { harness in
            let urgent = try PostHarness.rule("urgent", conditions: [PostCondition(field: FieldPath("description")!, .contains("URGENT"))])
            let broken = try PostHarness.rule("broken", text: "{{description}} by {{item.owner}}")
            let scheduler = harness.scheduler([urgent, broken])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["urgent: pay rent", "read a book"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            #expect(await harness.recorder.wait(for: 2, PostFailed.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: urgent: pay rent"])
            let failures = harness.recorder.events(PostFailed.self)
            #expect(failures.allSatisfy { $0.rule == "broken" && $0.reason.contains("\"item.owner\"") && $0.attempts == 0 })
            await running.stop()
        }
    }

    @Test func anIntentLeftUnsentIsSentAtTheNextStart() async throws {
        try await PostHarness.run { harness in
            let service = HangingPostService()
            let hanging = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let hangingRunning = await RunningGroup("hanging", hanging.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["stay in the outbox"]))
            await service.entered()
            #expect(hanging.pendingCount == 1)
            await hangingRunning.stop()  // cancels the post in flight: the intent stays in the journal
            #expect(harness.sandbox.posts().isEmpty)

            let scheduler = harness.scheduler([try PostHarness.rule()])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: stay in the outbox"])
            await running.stop()
        }
    }

    @Test func aPostMadeButNotRecordedCountsAsSentThroughTheDuplicateAnswer() async throws {
        try await PostHarness.run { harness in
            // A previous run appended the intent and posted, then died before marking it done.
            let outbox = PostOutbox(path: harness.outboxPath, io: BlockingIOThread(name: "test.outbox"))
            _ = try outbox.recover()
            try outbox.append(PostIntent(key: "tweet:item:loader.todos:t1", rule: "tweet", service: "twitter",
                                         content: .status(text: "posted before the crash", media: nil), correlation: nil, created: Date()))
            outbox.closeJournal()
            _ = try await harness.twitter().update(status: "posted before the crash")

            let scheduler = harness.scheduler([try PostHarness.rule()])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            let sent = try #require(harness.recorder.events(PostSent.self).first)
            #expect(sent.duplicate && sent.id == nil && sent.key == "tweet:item:loader.todos:t1")
            #expect(harness.sandbox.posts().map(\.text) == ["posted before the crash"])
            // Now done: announcing t1 again posts nothing.
            try await harness.announce(PostHarness.todos(["posted before the crash"]))
            #expect(scheduler.pendingCount == 0)
            try await harness.announce(PostHarness.todos(["a later one"], firstID: 2))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            #expect(harness.recorder.events(PostSent.self).count == 2)
            #expect(harness.sandbox.posts().map(\.text) == ["posted before the crash", "New todo: a later one"])
            await running.stop()
        }
    }

    @Test func serverErrorsAndLostAnswersAreRetriedWithBackoffAndRateLimitsWaitForTheReset() async throws {
        try await PostHarness.run { harness in
            let reset = harness.start.addingTimeInterval(3 + 30)
            let service = ScriptedPostService([
                .failure(Self.httpError(503)), .failure(.transport("connection reset")),
                .failure(ServiceError(kind: .rateLimited, message: "429", status: 429, rateLimit: RateLimit(reset: reset))),
            ])
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["retry me"]))
            for _ in 0..<3 {
                await harness.clock.waitForSleepers(1)
                harness.clock.advanceToNextDeadline()
            }
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            // 1 s, then 2 s of backoff, then until the reset 30 s later.
            #expect(harness.clock.now.offset == .seconds(33))
            #expect(harness.recorder.events(PostSent.self).first?.attempts == 4)
            #expect(service.recorded.map(\.mayExist) == [false, true, true, true])
            await running.stop()
        }
    }

    @Test func retriesEndAfterTheConfiguredAttempts() async throws {
        try await PostHarness.run { harness in
            let service = ScriptedPostService(Array(repeating: .failure(Self.httpError(502)), count: 5))
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service],
                                              retry: .init(initial: .seconds(1), maximum: .seconds(60), attempts: 3))
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["never"]))
            for _ in 0..<2 {
                await harness.clock.waitForSleepers(1)
                harness.clock.advanceToNextDeadline()
            }
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            let failed = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failed.reason.hasPrefix("gave up after 3 attempts: ") && failed.attempts == 3)
            #expect(service.recorded.count == 3)
            await running.stop()
        }
    }

    @Test func anUnauthorizedPostFailsAtOnceWithTheReason() async throws {
        try await PostHarness.run { harness in
            let wrong = OAuthCredentials(consumerKey: "sandbox", consumerSecret: "wrong", token: "sandbox", tokenSecret: "wrong")
            let scheduler = harness.scheduler([try PostHarness.rule()],
                                              services: ["twitter": TwitterPostService(client: harness.twitter(wrong), baseDirectory: harness.directory)])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["not allowed"]))
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            let failed = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failed.status == 401 && failed.attempts == 1 && failed.reason.contains("401"))
            #expect(!failed.reason.contains("wrong"), "no secret in the reason")
            #expect(harness.sandbox.posts().isEmpty)
            await running.stop()
            // Failed is done: a restart does not try again.
            let restarted = harness.scheduler([try PostHarness.rule()])
            let restartedRunning = await RunningGroup("restarted", restarted.service(on: harness.bus))
            #expect(restarted.pendingCount == 0)
            await restartedRunning.stop()
        }
    }

    @Test func theRateMakesPostsWaitTheirTurn() async throws {
        try await PostHarness.run { harness in
            let scheduler = harness.scheduler([try PostHarness.rule(rate: PostRate(parsing: "1/h"))])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["first", "second"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await harness.clock.waitForSleepers(1)
            #expect(harness.clock.nextDeadline?.offset == .seconds(3600))
            #expect(harness.sandbox.posts().count == 1)
            harness.clock.advanceToNextDeadline()
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["New todo: first", "New todo: second"])
            await running.stop()
        }
    }

    @Test func quietHoursDeferPostsToTheirEnd() async throws {
        // 23:00 UTC; quiet from 22:00 to 07:00 UTC.
        let start = Date(timeIntervalSince1970: TimeInterval(1_800_000_000 - 1_800_000_000 % 86_400 + 23 * 3_600))
        try await PostHarness.run(start: start) { harness in
            let quiet = QuietHours(start: 22 * 60, end: 7 * 60, timeZone: TimeZone(identifier: "UTC")!)
            let scheduler = harness.scheduler([try PostHarness.rule(quiet: quiet)])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["good morning"]))
            await harness.clock.waitForSleepers(1)
            #expect(harness.clock.nextDeadline?.offset == .seconds(8 * 3_600))
            #expect(harness.sandbox.posts().isEmpty)
            harness.clock.advanceToNextDeadline()
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
        }
    }

    @Test func aBaaSTargetCreatesOneObjectPerItemEvenWhenRetriedAfterACrash() async throws {
        try await PostHarness.run { harness in
            let fields: [String: FieldTemplate] = [
                "title": try FieldTemplate(.string("From todo {{_id}}: {{description}}")), "done": try FieldTemplate(.bool(false)),
            ]
            let rule = PostRule(name: "copy", on: "loader.todos.finished", scope: .newItems, service: "baas",
                                target: .object(bucket: "inbox", fields: fields))
            // A previous run created the object for t1 and crashed before marking it done.
            let outbox = PostOutbox(path: harness.outboxPath, io: BlockingIOThread(name: "test.outbox"))
            _ = try outbox.recover()
            let earlier = ["title": JSONValue.string("From todo t1: one"), "done": .bool(false), BaaSPostService.keyField: .string("copy:item:loader.todos:t1")]
            try outbox.append(PostIntent(key: "copy:item:loader.todos:t1", rule: "copy", service: "baas",
                                         content: .object(bucket: "inbox", fields: earlier), correlation: nil, created: Date()))
            outbox.closeJournal()
            let created = try await harness.baas().create(bucket: "inbox", fields: earlier)

            let scheduler = harness.scheduler([rule])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            #expect(harness.recorder.events(PostSent.self).first?.id == created.id)
            try await harness.announce(PostHarness.todos(["one", "two"]))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            let objects = try await harness.baas().query(bucket: "inbox").results
            #expect(objects.count == 2)
            #expect(objects.compactMap { $0.fields["title"]?.stringValue }.sorted() == ["From todo t1: one", "From todo t2: two"])
            #expect(objects.compactMap { $0.fields[BaaSPostService.keyField]?.stringValue }.sorted() == ["copy:item:loader.todos:t1", "copy:item:loader.todos:t2"])
            await running.stop()
        }
    }

    @Test func aTornLastJournalLineIsSetAsideAndTheRestKept() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("posts.jsonl").path
        let outbox = PostOutbox(path: path, io: BlockingIOThread(name: "test.outbox"))
        _ = try outbox.recover()
        let intent = PostIntent(key: "r:item:1", rule: "r", service: "twitter", content: .status(text: "kept", media: nil),
                                correlation: nil, created: Date(timeIntervalSince1970: 1_800_000_000))
        try outbox.append(intent)
        try outbox.append(PostIntent(key: "r:item:2", rule: "r", service: "twitter", content: .status(text: "done", media: nil),
                                     correlation: nil, created: Date(timeIntervalSince1970: 1_800_000_000)))
        try outbox.markDone("r:item:2", rule: "r", result: "sent", at: Date(timeIntervalSince1970: 1_800_000_001))
        outbox.closeJournal()
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"op":"intent","key":"r:it"#.utf8))
        try handle.close()

        let reopened = PostOutbox(path: path, io: BlockingIOThread(name: "test.outbox"))
        let recovery = try reopened.recover()
        reopened.closeJournal()
        #expect(recovery.pending == [intent])
        #expect(recovery.known == ["r:item:1", "r:item:2"])
        #expect(recovery.sends["r"]?.count == 1)
        #expect(recovery.setAside == 1)
        #expect(try String(contentsOfFile: path + ".torn", encoding: .utf8) == #"{"op":"intent","key":"r:it"# + "\n")
        // Compacted: the done intent's body is gone, the pending one and the done key stay.
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aVideoIsValidatedUploadedInChunksWithProgressAndAttached() async throws {
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1 }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            let clip = MP4Fixture.make(duration: 2, width: 640, height: 360, fps: 30, mdatBytes: 3_000)
            try clip.write(to: harness.directory.appendingPathComponent("clip.mp4"))
            try MP4Fixture.make(duration: 31).write(to: harness.directory.appendingPathComponent("long.mp4"))
            let client = { () -> TwitterClient in
                var client = harness.twitter()
                client.segmentSize = 1_000
                return client
            }()
            let services: [String: any PostService] = ["twitter": TwitterPostService(client: client, baseDirectory: harness.directory)]
            let fixed = try PostHarness.rule("clip", text: "{{description}}", media: .file("clip.mp4"))
            let fromField = try PostHarness.rule("field", text: "field: {{description}}", media: .field(FieldPath("item.video")!))
            let scheduler = harness.scheduler([fixed, fromField], services: services)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))

            let todos = [
                BaaSObject(id: "v1", fields: ["description": .string("watch this"), "video": .string("clip.mp4")]),
                BaaSObject(id: "v2", fields: ["description": .string("too long"), "video": .string("long.mp4")]),
            ]
            try await harness.announce(TodosLoaded(loader: "todos", bucket: "todos", todos: todos, newTodos: todos, removedIDs: []))
            #expect(await harness.recorder.wait { envelopes in
                envelopes.filter { $0.event is PostSent || $0.event is PostFailed }.count == 4
            })
            let posts = harness.sandbox.posts()
            #expect(Set(posts.map(\.text)) == ["watch this", "too long", "field: watch this"])
            #expect(posts.allSatisfy { $0.mediaIDs.count == 1 })

            // The too-long video named by its field fails before any upload, with the limit named.
            let failed = harness.recorder.events(PostFailed.self)
            #expect(failed.count == 1)
            #expect(failed.first?.key == "field:item:loader.todos:v2" && failed.first?.attempts == 1)
            #expect(failed.first?.reason.contains("31") == true && failed.first?.reason.contains("30 s") == true, "\(failed)")

            // Progress: initialized, one step per 1,000-byte segment, processing, completed.
            let steps = harness.recorder.events(PostUploadProgress.self).filter { $0.key == "clip:item:loader.todos:v1" }
            #expect(steps.first?.phase == "initialized")
            #expect(steps.last?.phase == "completed" && steps.last?.bytesSent == clip.count && steps.last?.totalBytes == clip.count)
            let uploading = steps.filter { $0.phase == "uploading" }
            #expect(uploading.count == (clip.count + 999) / 1_000)
            #expect(uploading.map(\.bytesSent) == uploading.map(\.bytesSent).sorted())
            #expect(harness.recorder.events(PostUploadProgress.self).allSatisfy { $0.key != "field:item:loader.todos:v2" })
            let progressTopics = Set(harness.recorder.envelopes.filter { $0.event is PostUploadProgress }.map(\.topic.name))
            #expect(progressTopics == ["upload.clip.progress", "upload.field.progress"])
            await running.stop()
        }
    }

    @Test func twoPublishersOfOneItemMakeOneIntent() async throws {
        try await PostHarness.run { harness in
            let service = ScriptedPostService([])
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            let event = PostHarness.todos(["same item"])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await harness.announce(event) } }
                try await group.waitForAll()
            }
            try await harness.announce(PostHarness.todos(["after"], firstID: 2))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            #expect(service.recorded.map(\.key) == ["tweet:item:loader.todos:t1", "tweet:item:loader.todos:t2"])
            let journal = try String(contentsOfFile: harness.outboxPath, encoding: .utf8)
            #expect(journal.components(separatedBy: #""op":"intent""#).count - 1 == 2)
            await running.stop()
        }
    }

    @Test func aDuplicateAnswerToAFirstAttemptIsAnotherItemsTextAndFails() async throws {
        try await PostHarness.run { harness in
            let scheduler = harness.scheduler([try PostHarness.rule()])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            let twins = [BaaSObject(id: "a", fields: ["description": .string("buy milk")]),
                         BaaSObject(id: "b", fields: ["description": .string("buy milk")])]
            try await harness.announce(TodosLoaded(loader: "todos", bucket: "todos", todos: twins, newTodos: twins, removedIDs: []))
            #expect(await harness.recorder.wait { $0.count == 2 })
            #expect(harness.recorder.events(PostSent.self).map(\.key) == ["tweet:item:loader.todos:a"])
            let failed = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failed.key == "tweet:item:loader.todos:b" && failed.status == 403 && failed.reason.contains("187"))
            #expect(harness.sandbox.posts().count == 1)
            await running.stop()
        }
    }

    @Test func aForbiddenAnswerOtherThanDuplicateFailsAtOnce() async throws {
        try await PostHarness.run { harness in
            let service = ScriptedPostService([.failure(Self.httpError(403, code: 261)), .failure(Self.httpError(400, code: 44))])
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["forbidden", "bad request"]))
            #expect(await harness.recorder.wait(for: 2, PostFailed.self))
            #expect(harness.recorder.events(PostFailed.self).map(\.status) == [403, 400])
            #expect(harness.recorder.events(PostFailed.self).allSatisfy { $0.attempts == 1 })
            #expect(service.recorded.count == 2)
            await running.stop()
        }
    }

    @Test func aRateLimitWithAResetInThePastBacksOffInsteadOfSpinning() async throws {
        try await PostHarness.run { harness in
            let past = harness.start.addingTimeInterval(-60)
            let limited = Result<String, ServiceError>.failure(
                ServiceError(kind: .rateLimited, message: "429", status: 429, rateLimit: RateLimit(reset: past)))
            let service = ScriptedPostService([limited, limited, limited])
            let scheduler = harness.scheduler([try PostHarness.rule()], services: ["twitter": service],
                                              retry: .init(initial: .seconds(1), maximum: .seconds(60), attempts: 2))
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["patience"]))
            for _ in 0..<3 {
                await harness.clock.waitForSleepers(1)
                harness.clock.advanceToNextDeadline()
            }
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            // 1 s, 2 s, 4 s; rate-limit answers are not counted against the 2 attempts.
            #expect(harness.clock.now.offset == .seconds(7))
            #expect(harness.recorder.events(PostSent.self).first?.attempts == 4)
            await running.stop()
        }
    }

    @Test func theRateWindowHoldsAcrossARestart() async throws {
        try await PostHarness.run { harness in
            let rule = try PostHarness.rule(rate: PostRate(parsing: "1/h"))
            let first = harness.scheduler([rule])
            let firstRunning = await RunningGroup("first", first.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["one"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await firstRunning.stop()

            harness.clock.advance(by: .seconds(600))
            let second = harness.scheduler([rule])
            let secondRunning = await RunningGroup("second", second.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["two"], firstID: 2))
            await harness.clock.waitForSleepers(1)
            #expect(harness.clock.nextDeadline?.offset == .seconds(3600), "the send before the restart still counts")
            #expect(harness.sandbox.posts().count == 1)
            harness.clock.advanceToNextDeadline()
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            await secondRunning.stop()
        }
    }

    @Test func quietHoursFollowTheWallClockOnADaylightSavingDay() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let quiet = QuietHours(start: 22 * 60, end: 7 * 60, timeZone: berlin)
        // 2026-03-28 23:00 in Berlin (22:00 UTC); the clocks go forward at 02:00 that night.
        let evening = Date(timeIntervalSince1970: 1_774_735_200)
        // Ends at 07:00 Berlin summer time, 05:00 UTC: 7 hours later, not 8.
        #expect(quiet.end(after: evening) == Date(timeIntervalSince1970: 1_774_760_400))
        // 21:59 is not quiet; 06:59 on the spring-forward morning still is.
        #expect(quiet.end(after: evening.addingTimeInterval(-61 * 60)) == nil)
        let morning = Date(timeIntervalSince1970: 1_774_760_400 - 60)
        #expect(quiet.end(after: morning) == Date(timeIntervalSince1970: 1_774_760_400))
        // A window within one day.
        let lunch = QuietHours(start: 12 * 60, end: 13 * 60, timeZone: TimeZone(identifier: "UTC")!)
        let noon = Date(timeIntervalSince1970: 1_774_735_200 - 10 * 3600 + 30 * 60)  // 12:30 UTC
        #expect(lunch.end(after: noon) == noon.addingTimeInterval(30 * 60))
        #expect(lunch.end(after: noon.addingTimeInterval(3600)) == nil)
    }

    @Test func aSecondRunIsRefusedWithAClearErrorWhileRunningAndAfter() async throws {
        try await PostHarness.run { harness in
            let scheduler = harness.scheduler([try PostHarness.rule()])
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            await #expect(throws: PostSchedulerError(scheduler: "posts", reason: .running)) {
                try await scheduler.run(on: harness.bus)
            }
            // The refused run changed nothing: the first one still posts.
            try await harness.announce(PostHarness.todos(["still posting"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            try await running.stop().get()
            let refused = await #expect(throws: PostSchedulerError.self) { try await scheduler.run(on: harness.bus) }
            #expect(refused?.reason == .finished)
            #expect(refused?.description == "post scheduler posts: already ran; a scheduler runs once (make a new one on the same outbox)")
        }
    }

}
