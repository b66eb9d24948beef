import Foundation
import HeraldTestSupport
import Testing

/// `herald post` on an `"api": "v2"` service: the v2 chunked upload with the progress lines,
/// then `POST /2/tweets`; a video outside the limits is refused before anything is sent.
@Suite(.timeLimit(.minutes(5))) struct XPostCommandTests {
    static func config(in directory: URL, sandbox: URL) throws -> URL {
        let config = directory.appendingPathComponent("post.json")
        try Data("""
            {"services": {"x": {"kind": "twitter", "api": "v2", "url": "\(sandbox.absoluteString)", "auth": \(PostReliabilityTests.auth)}},
             "loaders": {"home": {"kind": "timeline", "service": "x", "every": "1h"}}}
            """.utf8).write(to: config)
        return config
    }

    @Test func postsAVideoThroughTheV2UploadWithProgressLines() async throws {
        let herald = try #require(PostCommandTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.config(in: directory, sandbox: sandbox.url)

        let sample = BuiltProducts.packageRoot.appendingPathComponent("Examples/media/sample.mp4")
        let video = try #require(await ChildProcess.run(herald, ["post", "v2 with a video", "--media", sample.path, "--config", config.path]))
        #expect(video.status == 0, "stderr: \(video.stderr)")
        #expect(video.stdout.contains(" with media ") && video.stdout.contains(" via x"), "stdout: \(video.stdout)")
        let progress = video.stderr.split(separator: "\n").filter { $0.hasPrefix("upload: ") }
        #expect(progress.first?.hasPrefix("upload: initialized ") == true)
        #expect(progress.contains { $0.hasPrefix("upload: processing ") })
        #expect(progress.last?.hasPrefix("upload: completed ") == true, "\(progress)")

        let wide = directory.appendingPathComponent("wide.mp4")
        try MP4Fixture.make(width: 2000, height: 400).write(to: wide)
        let refused = try #require(await ChildProcess.run(herald, ["post", "too wide", "--media", wide.path, "--config", config.path]))
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("1280"), "stderr: \(refused.stderr)")
        #expect(try await sandbox.posts() == ["v2 with a video"])
        await sandbox.stop()
    }
}
