import Foundation
import HeraldServices
import HeraldSubscribers
import HeraldTestSupport
import Testing

/// A cluster node reads media named by an intent from the post queue only inside
/// `cluster.mediaDirectory`, links and `..` resolved; without it, no media at all.
@Suite(.timeLimit(.minutes(5)))
struct MediaAccessTests {
    private func intent(_ media: String) -> PostIntent {
        PostIntent(key: "r:\(media)", rule: "r", service: "twitter", content: .status(text: "with \(media)", media: media), correlation: nil, created: Date())
    }

    @Test func mediaOutsideTheDirectoryOrThroughALinkOutOfItIsRefusedAndInsideIsPosted() async throws {
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1 }) { harness in
            let media = harness.directory.appendingPathComponent("media")
            let outside = harness.directory.appendingPathComponent("private")
            for directory in [media, outside] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
            let clip = MP4Fixture.make(duration: 2, width: 640, height: 360, fps: 30, mdatBytes: 3_000)
            try clip.write(to: media.appendingPathComponent("clip.mp4"))
            try clip.write(to: outside.appendingPathComponent("secret.mp4"))
            try FileManager.default.createSymbolicLink(at: media.appendingPathComponent("link.mp4"),
                                                       withDestinationURL: outside.appendingPathComponent("secret.mp4"))
            // A link to a directory outside, then a component that does not exist and `..`: a
            // check by text would see a path inside, the kernel would read the file outside.
            try FileManager.default.createSymbolicLink(at: media.appendingPathComponent("dirlink"), withDestinationURL: outside)
            let service = TwitterPostService(client: harness.twitter(), baseDirectory: harness.directory, mediaAccess: .within(media))

            for path in [outside.appendingPathComponent("secret.mp4").path, "private/secret.mp4", "media/../private/secret.mp4",
                         "media/link.mp4", media.path + "/../private/secret.mp4", "media/dirlink/nope/../secret.mp4",
                         "media/dirlink/secret.mp4"] {
                do {
                    _ = try await service.post(intent(path), mayExist: false, progress: { _ in })
                    Issue.record("\(path) was read and posted")
                } catch let error as PostServiceError {
                    #expect(error.reason.contains("outside cluster.mediaDirectory") || error.reason.contains("no such file inside"),
                            "\(path): \(error)")
                }
            }
            #expect(harness.sandbox.posts().isEmpty)

            _ = try await service.post(intent("media/clip.mp4"), mayExist: false, progress: { _ in })
            _ = try await service.post(intent(media.appendingPathComponent("clip.mp4").path), mayExist: false, progress: { _ in })
            #expect(harness.sandbox.posts().map(\.mediaIDs.count) == [1, 1])
        }
    }

    @Test func aNodeWithoutAMediaDirectoryPostsNoMedia() async throws {
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1 }) { harness in
            try FileManager.default.createDirectory(at: harness.directory, withIntermediateDirectories: true)
            try MP4Fixture.make(duration: 2).write(to: harness.directory.appendingPathComponent("clip.mp4"))
            let service = TwitterPostService(client: harness.twitter(), baseDirectory: harness.directory, mediaAccess: .none)
            do {
                _ = try await service.post(intent("clip.mp4"), mayExist: false, progress: { _ in })
                Issue.record("a node without cluster.mediaDirectory read a file an intent named")
            } catch let error as PostServiceError {
                #expect(error.reason.contains("posts no media"))
            }
            #expect(harness.sandbox.posts().isEmpty)
        }
    }

    @Test func onlyARegularFileWithinTheSizeBoundIsRead() async throws {
        try await PostHarness.run({ $0.processingCheckAfterSeconds = 0; $0.processingPolls = 1 }) { harness in
            let media = harness.directory.appendingPathComponent("media")
            try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
            // A FIFO would block the media thread's open (and read) for ever.
            #expect(mkfifo(media.appendingPathComponent("fifo.mp4").path, 0o600) == 0)
            // Larger than the services take: refused before it is read.
            let large = media.appendingPathComponent("large.mp4")
            #expect(FileManager.default.createFile(atPath: large.path, contents: nil))
            let handle = try FileHandle(forWritingTo: large)
            try handle.truncate(atOffset: UInt64(15 * 1024 * 1024 + 1))
            try handle.close()
            for access in [MediaAccess.within(media), .anywhere] {
                let service = TwitterPostService(client: harness.twitter(), baseDirectory: harness.directory, mediaAccess: access)
                for (path, reason) in [("media/fifo.mp4", "not a regular file"), ("media/large.mp4", "bytes; at most 15728640")] {
                    do {
                        _ = try await service.post(intent(path), mayExist: false, progress: { _ in })
                        Issue.record("\(path) was posted")
                    } catch let error as PostServiceError {
                        #expect(error.reason.contains(reason), "\(access) \(path): \(error)")
                    }
                }
            }
            #expect(harness.sandbox.posts().isEmpty)
        }
    }
}
