import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
@testable import HeraldSubscribers
import HeraldTestSupport
import HeraldSync
import Testing

/// Loses the answer of the first status post: the server made it, the client sees a reset.
final class LostAnswerTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let lost = SyncLock(false)

    init(_ base: any HTTPTransport) { self.base = base }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await base.send(request)
        let loseIt = request.url.path == "/api/v1/statuses" && lost.withLock { done in
            defer { done = true }
            return !done
        }
        if loseIt { throw ServiceError.transport("connection reset by peer (answer lost in the test)") }
        return response
    }
}

extension PostHarness {
    func mastodon(transport: (any HTTPTransport)? = nil, maxMediaPolls: Int = 60) -> MastodonClient {
        // Media polls wait a millisecond of real time; the scheduler's backoff uses the manual clock.
        MastodonClient(baseURL: sandbox.baseURL, token: sandbox.configuration.mastodon.token, transport: transport ?? self.transport,
                       clock: ContinuousClock(), now: now, mediaPollInterval: .milliseconds(1), maxMediaPolls: maxMediaPolls)
    }

    func mastodonScheduler(_ template: MastodonPostTemplate, client: MastodonClient? = nil) -> PostScheduler {
        let rule = PostRule(name: "toot", on: "loader.todos.finished", scope: .newItems, service: "mastodon", target: .mastodonStatus(template))
        return scheduler([rule], services: ["mastodon": MastodonPostService(client: client ?? mastodon(), baseDirectory: directory)])
    }
}

@Suite(.timeLimit(.minutes(5))) struct MastodonPostTests {
    @Test func aNewItemBecomesAStatusCarryingItsIdempotencyKeyAndOptions() async throws {
        try await PostHarness.run { harness in
            let template = MastodonPostTemplate(text: try PostTemplate("New todo: {{description}}"), visibility: "unlisted",
                                                spoiler: try PostTemplate("todo {{_id}}"), language: "en")
            let scheduler = harness.mastodonScheduler(template)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["buy milk 🥛", "call mum"]))
            #expect(await harness.recorder.wait(for: 2, PostSent.self))
            await running.stop()
            let posts = harness.sandbox.mastodonPosts()
            #expect(posts.map(\.text) == ["New todo: buy milk 🥛", "New todo: call mum"])
            #expect(posts.map(\.spoilerText) == ["todo t1", "todo t2"])
            #expect(posts.allSatisfy { $0.visibility == "unlisted" && $0.language == "en" })
            let sent = harness.recorder.events(PostSent.self)
            #expect(posts.map(\.idempotencyKey) == sent.map(\.key))
            #expect(sent.map(\.id) == posts.map(\.id))
        }
    }

    @Test func aLostAnswerIsRetriedWithTheSameKeyAndMakesOneStatus() async throws {
        try await PostHarness.run { harness in
            let client = harness.mastodon(transport: LostAnswerTransport(harness.transport))
            let scheduler = harness.mastodonScheduler(MastodonPostTemplate(text: try PostTemplate("{{description}}")), client: client)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["only once"]))
            await harness.clock.waitForSleepers()  // the backoff after the lost answer
            harness.clock.advance(by: .seconds(1))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
            #expect(harness.sandbox.mastodonPosts().map(\.text) == ["only once"])
            #expect(harness.recorder.events(PostSent.self).first?.attempts == 2)
        }
    }

    @Test func mediaWithAltTextIsUploadedWaitedForAndAttached() async throws {
        try await PostHarness.run({ $0.mastodon.mediaPolls = 3 }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            try Data(repeating: 9, count: 2048).write(to: harness.directory.appendingPathComponent("clip.mp4"))
            let template = MastodonPostTemplate(text: try PostTemplate("{{description}}"), media: .file("clip.mp4"),
                                                description: try PostTemplate("A clip about {{description}}"))
            let scheduler = harness.mastodonScheduler(template)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["cats"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            await running.stop()
            let post = try #require(harness.sandbox.mastodonPosts().first)
            #expect(post.mediaIDs.count == 1 && post.mediaDescriptions == ["A clip about cats"])
            let phases = harness.recorder.events(PostUploadProgress.self).map(\.phase)
            #expect(phases.first == "uploading" && phases.contains("processing") && phases.last == "completed")
        }
    }

    @Test func mediaThatNeverFinishesProcessingFailsThePost() async throws {
        try await PostHarness.run({ $0.mastodon.mediaPolls = nil }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            try Data(repeating: 9, count: 64).write(to: harness.directory.appendingPathComponent("stuck.mp4"))
            let scheduler = harness.mastodonScheduler(MastodonPostTemplate(text: try PostTemplate("{{description}}"), media: .file("stuck.mp4")),
                                                      client: harness.mastodon(maxMediaPolls: 5))
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["never"]))
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            await running.stop()
            let failure = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failure.reason.contains("still processing after 5 polls"))
            #expect(harness.sandbox.mastodonPosts().isEmpty)
        }
    }

    @Test func a422EndsAsFailedWithTheServersErrorText() async throws {
        try await PostHarness.run { harness in
            let scheduler = harness.mastodonScheduler(MastodonPostTemplate(text: try PostTemplate("{{description}}")))
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos([String(repeating: "long ", count: 120)]))
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            await running.stop()
            let failure = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failure.status == 422 && failure.attempts == 1)
            #expect(failure.reason.contains("Validation failed: Text character limit of 500 exceeded"))
        }
    }
}
