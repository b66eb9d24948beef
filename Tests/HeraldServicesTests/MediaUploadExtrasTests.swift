import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import Testing

@Suite struct MediaUploadExtrasTests {
    @Test func uploadEventsEndWithTheCompletedMedia() async throws {
        try await SandboxHarness.run { harness in
            var events: [UploadEvent] = []
            let video = MP4Fixture.make()
            for try await event in harness.twitter(segmentSize: (video.count + 1) / 2).uploadMediaEvents(video, mediaType: "video/mp4", category: "tweet_video") {
                events.append(event)
            }
            guard case .completed(let media)? = events.last else {
                Issue.record("no completion in \(events)")
                return
            }
            #expect(events.count == 7)  // initialized, 2 segments, 2 processing polls, completed progress, media
            #expect(media.size == video.count)
        }
    }

    @Test func cancellingBetweenSegmentsIsACancelledServiceErrorAndNothingIsFinalized() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter(segmentSize: 100)
            let upload = Task {
                await serviceError {
                    try await client.uploadMedia(MP4Fixture.make(), mediaType: "video/mp4", category: "tweet_video") { report in
                        // Cancel the uploading task itself once the first segment is in.
                        if report.phase == .uploading { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
            }
            let error = await upload.value
            #expect(error?.kind == .cancelled)
            // INIT and one APPEND reached the sandbox; no further segment, no FINALIZE.
            #expect(harness.sandbox.requestsReceived == 2)
        }
    }

    @Test func processingLongerThanMaxStatusPollsIsGivenUp() async throws {
        try await SandboxHarness.run({ $0.processingPolls = 5; $0.processingCheckAfterSeconds = 4 }) { harness in
            var client = harness.twitter()
            client.maxStatusPolls = 2
            let error = await serviceError {
                try await client.uploadMedia(MP4Fixture.make(), mediaType: "video/mp4", category: "tweet_video")
            }
            #expect(error?.kind == .processingFailed)
            #expect(error?.message.contains("after 2 polls") == true)
            #expect(harness.clock.sleeps == [.seconds(4), .seconds(4)])
        }
    }

    @Test func moreThanAThousandSegmentsIsRefusedBeforeSending() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.twitter(segmentSize: 1).uploadMedia(Data(count: 1001), mediaType: "image/png") }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.sandbox.requestsReceived == 0)
            // A partial last segment counts: 2001 bytes in 2-byte segments are 1001 segments.
            let rounded = await serviceError { try await harness.twitter(segmentSize: 2).uploadMedia(Data(count: 2001), mediaType: "image/png") }
            #expect(rounded?.kind == .invalidRequest)
            #expect(harness.sandbox.requestsReceived == 0)
        }
    }

    @Test func twitterVideoLimitsRefuseLargeOrNonMP4VideoBeforeSending() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let tooLarge = await serviceError { try await client.uploadMedia(Data(count: 15 * 1024 * 1024 + 1), mediaType: "video/mp4") }
            #expect(tooLarge?.kind == .invalidRequest)
            let wrongType = await serviceError { try await client.uploadMedia(Data(count: 10), mediaType: "video/quicktime") }
            #expect(wrongType?.kind == .invalidRequest)
            var unlimited = client
            unlimited.mediaLimits = nil
            let media = try await unlimited.uploadMedia(Data(count: 10), mediaType: "video/quicktime")
            #expect(!media.mediaID.isEmpty)
        }
    }
}
