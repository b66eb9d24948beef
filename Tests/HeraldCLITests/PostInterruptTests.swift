import Foundation
import Testing
import HeraldTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald post` stopped by a signal mid-upload: it cancels the upload, says in one line what
/// was (not) posted and exits with 128 + the signal, instead of dying silently.
@Suite(.timeLimit(.minutes(5))) struct PostInterruptTests {
    /// Queues forced answers for the next requests to `path` of a `herald sandbox` process.
    static func script(_ sandbox: URL, path: String, _ responses: String) async throws {
        var request = URLRequest(url: sandbox.appendingPathComponent("_sandbox/faults"))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"path": "\#(path)", "responses": \#(responses)}"#.utf8)
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: body, as: UTF8.self))")
    }

    @Test(arguments: [(SIGINT, "SIGINT", Int32(130)), (SIGTERM, "SIGTERM", Int32(143))])
    func aSignalMidUploadStopsItSaysNothingWasPostedAndExitsNonZero(signal: Int32, name: String, status: Int32) async throws {
        let herald = try #require(PostCommandTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try PostCommandTests.config(in: directory, sandbox: sandbox.url)
        // INIT is answered; the first APPEND's answer is held back for an hour (the sandbox
        // lets go of it when it stops), so the upload is surely in flight when the signal comes.
        try await Self.script(sandbox.url, path: "/1.1/media/upload.json", #"[{"delay": 0}, {"delay": 3600}]"#)
        let sample = BuiltProducts.packageRoot.appendingPathComponent("Examples/media/sample.mp4")

        let post = try ChildProcess(herald, ["post", "never posted", "--media", sample.path, "--config", config.path])
        let started = await post.waitForStandardError { $0.contains("upload: initialized ") }
        #expect(started, "stderr: \(post.stderr)")
        post.signal(signal)
        let finished = try #require(await post.finish(within: .seconds(60)), "herald post did not stop on \(name)")
        #expect(finished.status == status)
        let lines = finished.stderr.split(separator: "\n").map(String.init)
        #expect(lines.last == "herald: post interrupted by \(name); nothing was posted", "stderr: \(finished.stderr)")
        #expect(lines.filter { $0.hasPrefix("herald: ") }.count == 1, "one line, no failure report besides: \(finished.stderr)")
        #expect(finished.stdout.isEmpty)
        #expect(try await sandbox.posts().isEmpty)
        await sandbox.stop()
    }
}

extension PostInterruptTests {
    /// Interrupted once the video is uploaded, while the status is (about to be) sent: the line
    /// says the video was uploaded, and either that no status was posted (then the sandbox has
    /// none) or that one may have been (its answer never came).
    @Test func aSignalAfterTheUploadSaysWhatWasDone() async throws {
        let herald = try #require(PostCommandTests.herald)
        let directory = try PostReliabilityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try await PostReliabilityTests.SandboxProcess.start(in: directory, herald: herald)
        let config = try PostCommandTests.config(in: directory, sandbox: sandbox.url)
        // The status is served (and recorded) at once, but its answer is held back for an hour.
        try await Self.script(sandbox.url, path: "/1.1/statuses/update.json", #"[{"delay": 3600}]"#)
        let sample = BuiltProducts.packageRoot.appendingPathComponent("Examples/media/sample.mp4")

        let post = try ChildProcess(herald, ["post", "maybe posted", "--media", sample.path, "--config", config.path])
        let uploaded = await post.waitForStandardError { $0.contains("upload: completed ") }
        #expect(uploaded, "stderr: \(post.stderr)")
        post.signal(SIGINT)
        let finished = try #require(await post.finish(within: .seconds(60)), "herald post did not stop on SIGINT")
        #expect(finished.status == 130)
        let last = try #require(finished.stderr.split(separator: "\n").last.map(String.init))
        let notPosted = #/^herald: post interrupted by SIGINT; the video was uploaded \(media \d+\) but no status was posted$/#
        let maybe = "herald: post interrupted by SIGINT; the status was sent without an answer, so it may have been posted (check the timeline)"
        #expect(last.wholeMatch(of: notPosted) != nil || last == maybe, "stderr: \(finished.stderr)")
        if last.wholeMatch(of: notPosted) != nil {
            #expect(try await sandbox.posts().isEmpty)
        }
        #expect(finished.stdout.isEmpty)
        await sandbox.stop()
    }
}
