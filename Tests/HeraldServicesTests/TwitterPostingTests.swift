import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import Testing
import HeraldTesting

@Suite struct TwitterPostingTests {
    @Test func updatePostsRFC3986EncodedTextAndTheSandboxRecordsIt() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let text = "Hello Ladies + Gentlemen, a signed OAuth request! 日本語 🎉 a&b=c?d%e"
            let status = try await client.update(status: text)
            #expect(status.text == text)
            #expect(status.user.screenName == "herald_sandbox")
            let reply = try await client.update(status: "a reply", inReplyTo: status.id)
            #expect(reply.inReplyToStatusID == status.id)
            let posts = harness.sandbox.posts()
            #expect(posts.map(\.text) == [text, "a reply"])
            #expect(posts.last?.inReplyToStatusID == status.id)
            // Posts appear in the home timeline too.
            let page = try await client.homeTimeline(TimelineQuery(count: 2))
            #expect(page.statuses.first?.id == reply.id)
        }
    }

    @Test func duplicateStatusIs403Code187() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            _ = try await client.update(status: "only once")
            let error = await serviceError { try await client.update(status: "only once") }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 403)
            #expect(error?.hasAPIError(code: 187) == true)
            #expect(harness.sandbox.posts().count == 1)
        }
    }

    @Test func overlongStatusIs403Code186() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.twitter().update(status: String(repeating: "あ", count: 281)) }
            #expect(error?.status == 403)
            #expect(error?.hasAPIError(code: 186) == true)
            let fits = try await harness.twitter().update(status: String(repeating: "🎉", count: 280))
            #expect(fits.text.count == 280)
        }
    }

    @Test func dailyLimitIs403Code185() async throws {
        try await SandboxHarness.run({ $0.dailyUpdateLimit = 1 }) { harness in
            let client = harness.twitter()
            _ = try await client.update(status: "first")
            let error = await serviceError { try await client.update(status: "second") }
            #expect(error?.status == 403)
            #expect(error?.hasAPIError(code: 185) == true)
        }
    }

    @Test func emptyStatusIsRefusedBeforeSending() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.twitter().update(status: "  \n") }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.sandbox.posts().isEmpty)
        }
    }

    @Test func chunkedVideoUploadPollsStatusOnTheInjectedClockThenPosts() async throws {
        try await SandboxHarness.run({ $0.processingPolls = 2; $0.processingCheckAfterSeconds = 3 }) { harness in
            let client = harness.twitter(segmentSize: 1000)
            let video = MP4Fixture.sized(2500)
            let reports = Recording<UploadProgress>()
            let media = try await client.uploadMedia(video, mediaType: "video/mp4", category: "tweet_video") { reports.append($0) }
            #expect(media.size == 2500)
            #expect(media.statusPolls == 2)
            #expect(harness.clock.sleeps == [.seconds(3), .seconds(3)])
            let phases = reports.values.map(\.phase)
            #expect(phases == [.initialized, .uploading, .uploading, .uploading, .processing, .processing, .completed])
            #expect(reports.values.filter { $0.phase == .uploading }.map(\.bytesSent) == [1000, 2000, 2500])
            let status = try await client.update(status: "with video", mediaIDs: [media.mediaID])
            #expect(!status.id.isEmpty)
            #expect(harness.sandbox.posts().last?.mediaIDs == [media.mediaID])
        }
    }

    @Test func imageUploadNeedsNoProcessing() async throws {
        try await SandboxHarness.run { harness in
            let media = try await harness.twitter().uploadMedia(Data(repeating: 7, count: 100), mediaType: "image/png")
            #expect(media.statusPolls == 0)
            #expect(harness.clock.sleeps.isEmpty)
        }
    }

    @Test func failedProcessingIsAProcessingFailedError() async throws {
        try await SandboxHarness.run({ $0.processingFails = true; $0.processingPolls = 1 }) { harness in
            let error = await serviceError {
                try await harness.twitter().uploadMedia(MP4Fixture.make(), mediaType: "video/mp4", category: "tweet_video")
            }
            #expect(error?.kind == .processingFailed)
            #expect(error?.message == "Unsupported video format")
        }
    }

    @Test func oversizedSegmentsAndMediaAreRejected() async throws {
        try await SandboxHarness.run({ $0.maxSegmentBytes = 1000; $0.maxMediaBytes = 5000 }) { harness in
            let tooLargeSegment = await serviceError {
                try await harness.twitter(segmentSize: 2000).uploadMedia(MP4Fixture.sized(3000), mediaType: "video/mp4")
            }
            #expect(tooLargeSegment?.status == 400)
            #expect(tooLargeSegment?.hasAPIError(code: 324) == true)
            let tooLargeMedia = await serviceError {
                try await harness.twitter(segmentSize: 1000).uploadMedia(MP4Fixture.sized(6000), mediaType: "video/mp4")
            }
            #expect(tooLargeMedia?.status == 400)
            let badSize = await serviceError {
                try await harness.twitter(segmentSize: 6 * 1024 * 1024).uploadMedia(MP4Fixture.make(), mediaType: "video/mp4")
            }
            #expect(badSize?.kind == .invalidRequest)
            let unknownMedia = await serviceError { try await harness.twitter().update(status: "x", mediaIDs: ["123"]) }
            #expect(unknownMedia?.hasAPIError(code: 324) == true)
        }
    }
}
