import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSubscribers
import HeraldTestSupport
import Testing

/// The post scheduler posting through X API v2 (`XPostService`) to the sandbox.
@Suite struct XPostSchedulerTests {
    static func x(_ harness: PostHarness, maxStatusPolls: Int = 60) -> XClient {
        harness.base.x(segmentSize: 1_000, maxStatusPolls: maxStatusPolls)
    }

    @Test func aVideoPostGoesThroughTheV2UploadAndAMediaThatNeverFinishesFailsThePost() async throws {
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1 }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            let clip = MP4Fixture.make(mdatBytes: 3_000)
            try clip.write(to: harness.directory.appendingPathComponent("clip.mp4"))
            let services: [String: any PostService] = ["twitter": XPostService(client: Self.x(harness), baseDirectory: harness.directory)]
            let scheduler = harness.scheduler([try PostHarness.rule("clip", text: "{{description}}", media: .file("clip.mp4"))], services: services)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["watch this"]))
            #expect(await harness.recorder.wait(for: 1, PostSent.self))
            #expect(harness.sandbox.posts().map(\.text) == ["watch this"])
            #expect(harness.sandbox.posts().first?.mediaIDs.count == 1)
            let steps = harness.recorder.events(PostUploadProgress.self)
            #expect(steps.first?.phase == "initialized" && steps.last?.phase == "completed")
            await running.stop()
        }
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1_000_000_000 }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            try MP4Fixture.make().write(to: harness.directory.appendingPathComponent("clip.mp4"))
            let services: [String: any PostService] = [
                "twitter": XPostService(client: Self.x(harness, maxStatusPolls: 3), baseDirectory: harness.directory),
            ]
            let scheduler = harness.scheduler([try PostHarness.rule("clip", text: "{{description}}", media: .file("clip.mp4"))], services: services)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["stuck"]))
            #expect(await harness.recorder.wait(for: 1, PostFailed.self))
            let failed = try #require(harness.recorder.events(PostFailed.self).first)
            #expect(failed.reason.contains("still processing after 3 status polls"), "\(failed.reason)")
            #expect(failed.attempts == 1)
            #expect(harness.sandbox.posts().isEmpty)
            await running.stop()
        }
    }

    @Test func duplicateContentOnAFirstAttemptFailsThePost() async throws {
        try await PostHarness.run { harness in
            let services: [String: any PostService] = ["twitter": XPostService(client: Self.x(harness), baseDirectory: harness.directory)]
            let scheduler = harness.scheduler([try PostHarness.rule("same", text: "always the same")], services: services)
            let running = await RunningGroup("scheduler", scheduler.service(on: harness.bus))
            try await harness.announce(PostHarness.todos(["a", "b"]))
            #expect(await harness.recorder.wait { $0.filter { $0.event is PostSent || $0.event is PostFailed }.count == 2 })
            #expect(harness.recorder.events(PostSent.self).count == 1)
            #expect(harness.recorder.events(PostFailed.self).first?.reason.contains("187") == true)
            #expect(harness.sandbox.posts().map(\.text) == ["always the same"])
            await running.stop()
        }
    }
}
