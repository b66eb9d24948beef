import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import Testing

/// Twitter's video limits (``MediaLimits/twitterVideo``) checked locally: each broken once with the limit and the actual
/// value in the message, each boundary accepted, and an upload refused before any request.
@Suite struct MediaLimitsVideoTests {
    /// The message `limits` refuses `data` with, or nil when it is accepted.
    private func refusal(_ data: Data, _ limits: MediaLimits = .twitterVideo, mediaType: String = "video/mp4") -> String? {
        do {
            try limits.validate(video: data, mediaType: mediaType)
            return nil
        } catch let error as ServiceError {
            #expect(error.kind == .invalidRequest)
            return error.message
        } catch {
            Issue.record("not a ServiceError: \(error)")
            return nil
        }
    }

    @Test func eachLimitBrokenOnceIsNamedWithTheActualValue() {
        let cases: [(Data, String)] = [
            (MP4Fixture.make(duration: 31.2), "video is 31.2 s long; the limit is 0.5–30 s"),
            (MP4Fixture.make(duration: 0.4), "video is 0.4 s long; the limit is 0.5–30 s"),
            (MP4Fixture.make(width: 1281, height: 720), "video is 1281×720; the limit is 32×32 to 1280×1024"),
            (MP4Fixture.make(width: 640, height: 1025), "video is 640×1025; the limit is 32×32 to 1280×1024"),
            (MP4Fixture.make(width: 31, height: 32), "video is 31×32; the limit is 32×32 to 1280×1024"),
            (MP4Fixture.make(width: 1200, height: 300), "video is 1200×300, aspect ratio 4:1; the limit is 1:3 to 3:1"),
            (MP4Fixture.make(width: 100, height: 400), "video is 100×400, aspect ratio 1:4; the limit is 1:3 to 3:1"),
            (MP4Fixture.make(fps: 41), "video is 41 fps; the limit is 40 fps"),
            (MP4Fixture.make(fps: 40.001), "video is 40.001 fps; the limit is 40 fps"),
            (MP4Fixture.make(audioChannels: 6), "audio has 6 channels; the limit is 2"),
            (Data("not a video".utf8), "video is not a readable MP4: not an MP4 file: no ftyp box at offset 0"),
        ]
        for (data, message) in cases {
            #expect(refusal(data) == message)
        }
        let small = MediaLimits(maxVideoBytes: 2000)
        let big = MP4Fixture.make(mdatBytes: 3000)
        #expect(refusal(big, small) == "video of \(big.count) bytes exceeds 2000 bytes")
        #expect(refusal(MP4Fixture.make(), mediaType: "video/quicktime") == "video type video/quicktime is not one of video/mp4")
    }

    @Test func boundaryValuesAreAccepted() throws {
        let accepted = [
            MP4Fixture.make(duration: 30), MP4Fixture.make(duration: 0.5), MP4Fixture.make(width: 1280, height: 1024),
            MP4Fixture.make(width: 32, height: 32), MP4Fixture.make(fps: 40), MP4Fixture.make(width: 960, height: 320),
            MP4Fixture.make(width: 320, height: 960), MP4Fixture.make(audioChannels: 1), MP4Fixture.make(audioChannels: 2),
        ]
        for data in accepted {
            #expect(refusal(data) == nil)
        }
        let info = try MediaLimits.twitterVideo.validate(video: MP4Fixture.make(duration: 30, width: 960, height: 320, fps: 40))
        #expect(info.duration == 30 && info.frameRate == 40 && info.width / info.height == 3)
    }

    @Test func aValueJustPastALimitIsNotRoundedOntoIt() {
        let info = MP4Info(majorBrand: "isom", duration: 30.0004, width: 640, height: 360, frameRate: 30, byteCount: 1000)
        #expect(throws: ServiceError.invalidRequest("video is 30.0004 s long; the limit is 0.5–30 s")) {
            try MediaLimits.twitterVideo.validate(info)
        }
    }

    @Test func limitsAreConfiguration() {
        let later = MediaLimits(
            maxVideoBytes: 512 * 1024 * 1024, videoDuration: 0.5...140, maxVideoWidth: 1920, maxVideoHeight: 1200,
            maxVideoFrameRate: 60, maxAudioChannels: 6)
        #expect(refusal(MP4Fixture.make(duration: 139, width: 1920, height: 1080, fps: 60, audioChannels: 6), later) == nil)
        #expect(refusal(MP4Fixture.make(duration: 141), later) == "video is 141 s long; the limit is 0.5–140 s")
    }

    @Test func anOverlongVideoUploadSendsNoRequest() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError {
                try await harness.twitter().uploadMedia(MP4Fixture.make(duration: 31), mediaType: "video/mp4", category: "tweet_video")
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message == "video is 31 s long; the limit is 0.5–30 s")
            #expect(harness.sandbox.requestsReceived == 0)
            // The same file goes through once the client's limits allow it.
            var lenient = harness.twitter()
            lenient.mediaLimits = MediaLimits(videoDuration: 0.5...140)
            let media = try await lenient.uploadMedia(MP4Fixture.make(duration: 31), mediaType: "video/mp4")
            #expect(!media.mediaID.isEmpty)
            #expect(harness.sandbox.requestsReceived > 0)
        }
    }

    /// Run with `HERALD_WRITE_SAMPLE_MP4=1` to rewrite the sample after changing the builder.
    @Test func theDocsSampleIsTheFixtureBuildersOutput() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/media/sample.mp4").standardizedFileURL
        let expected = MP4Fixture.make(duration: 2, width: 320, height: 240, fps: 25, mdatBytes: 4096, audioChannels: 2)
        if ProcessInfo.processInfo.environment["HERALD_WRITE_SAMPLE_MP4"] == "1" {
            try FileManager.default.createDirectory(at: sample.deletingLastPathComponent(), withIntermediateDirectories: true)
            try expected.write(to: sample)
        }
        #expect(try Data(contentsOf: sample) == expected)
        let info = try MP4Inspector.inspect(contentsOf: sample)
        #expect(info.duration == 2 && info.width == 320 && info.height == 240 && info.frameRate == 25)
        #expect(try MediaLimits.twitterVideo.validate(video: Data(contentsOf: sample)) == info)
    }
}
