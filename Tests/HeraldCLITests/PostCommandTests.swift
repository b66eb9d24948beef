import Foundation
import HeraldTestSupport
import Testing

/// `herald post` as a user runs it: against a `herald sandbox` process, with and without a video.
@Suite(.timeLimit(.minutes(5))) struct PostCommandTests {
    static let herald = BuiltProducts.url(of: "herald")

    static func config(in directory: URL, sandbox: URL) throws -> URL {
        let config = directory.appendingPathComponent("post.json")
        try Data("""
            {"services": {"twitter": {"url": "\(sandbox.absoluteString)", "auth": \(PostReliabilityTests.auth)}},
             "loaders": {"home": {"kind": "timeline", "service": "twitter", "every": "1h"}}}
            """.utf8).write(to: config)
        return config
    }

    @Test func postsTextAndAVideoWithPlainProgressLinesWhenNotATerminal() async throws {
        let herald = try #require(Self.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.config(in: directory, sandbox: sandbox.url)

        let text = try #require(await ChildProcess.run(herald, ["post", "Hello from herald 日本語", "--config", config.path]))
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(text.stdout.hasPrefix("posted status ") && text.stdout.hasSuffix(" via twitter\n"))

        let sample = BuiltProducts.packageRoot.appendingPathComponent("Examples/media/sample.mp4")
        let video = try #require(await ChildProcess.run(herald, ["post", "with a video", "--media", sample.path, "--config", config.path]))
        #expect(video.status == 0, "stderr: \(video.stderr)")
        #expect(video.stdout.contains(" with media "))
        let progress = video.stderr.split(separator: "\n").filter { $0.hasPrefix("upload: ") }
        #expect(progress.first?.hasPrefix("upload: initialized ") == true)
        #expect(progress.contains { $0.hasPrefix("upload: uploading ") })
        #expect(progress.last?.hasPrefix("upload: completed ") == true && progress.last?.hasSuffix("(100%)") == true, "\(progress)")
        #expect(!video.stderr.contains("\u{1B}["), "no terminal escapes into a pipe")

        #expect(try await sandbox.posts() == ["Hello from herald 日本語", "with a video"])
        await sandbox.stop()
    }

    @Test func aVideoOutsideTheLimitsIsRefusedBeforeUploadingWithTheLimitNamed() async throws {
        let herald = try #require(Self.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try Self.config(in: directory, sandbox: sandbox.url)
        let wide = directory.appendingPathComponent("wide.mp4")
        try MP4Fixture.make(duration: 2, width: 1200, height: 300).write(to: wide)

        let result = try #require(await ChildProcess.run(herald, ["post", "too wide", "--media", wide.path, "--config", config.path]))
        #expect(result.status == 1)
        #expect(result.stderr.contains("herald: post failed: ") && result.stderr.contains("aspect ratio 4:1"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("upload: "))
        #expect(try await sandbox.posts().isEmpty)
        await sandbox.stop()
    }

    @Test func aVideoOverFifteenMegabytesIsRefusedWithoutReadingIt() async throws {
        let herald = try #require(Self.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("big.mp4")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 15 * 1024 * 1024 + 1)  // sparse: no 15 MB written
        try handle.close()
        let result = try #require(await ChildProcess.run(herald, ["post", "big", "--media", big.path], in: BuiltProducts.packageRoot))
        #expect(result.status == 1)
        #expect(result.stderr == "herald: post failed: --media \(big.path): 15728641 bytes; the limit is 15728640 bytes (15 MB)\n")
    }

    @Test(arguments: [
        (["post"], "herald: post needs a non-empty text (herald post \"hello\" [--media clip.mp4])\n"),
        (["post", "  "], "herald: post needs a non-empty text (herald post \"hello\" [--media clip.mp4])\n"),
        (["post", "a", "b"], "herald: unexpected argument 'b' for 'post': post takes one text (quote it: herald post \"hello world\")\n"),
        (["post", "a", "--loud"], "herald: unknown option '--loud' for 'post' (see 'herald post --help')\n"),
        (["post", "a", "--media"], "herald: --media needs a value\n"),
        (["post", "a", "--media", "missing.mp4"], "herald: --media missing.mp4: no such file\n"),
        (["post", "a", "--service", "tiqav"], "herald: service \"tiqav\" is a tiqav service; posts go to a twitter or mastodon service\n"),
    ])
    func badInputIsOneClearLineWithExitCode2(arguments: [String], message: String) async throws {
        let herald = try #require(Self.herald)
        let result = try #require(await ChildProcess.run(herald, arguments, in: BuiltProducts.packageRoot))
        #expect(result.status == 2)
        #expect(result.stderr == message)
        #expect(result.stdout.isEmpty)
    }

    @Test func theShippedConfigPostsToItsEmbeddedSandbox() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(await ChildProcess.run(herald, ["post", "hello"], in: BuiltProducts.packageRoot))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("posted status "))
        #expect(result.stderr.contains("embedded sandbox"))
    }

    @Test func helpDescribesTheCommand() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(await ChildProcess.run(herald, ["post", "--help"]))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("USAGE: herald post TEXT [--media FILE] [--reply-to ID] [--config PATH] [--service NAME]"))
        #expect(result.stdout.contains("--media FILE"))
        #expect(result.stdout.contains("--reply-to ID      post as a reply to the post (status) with this id"))
    }
}
