import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import Testing

/// A request signed by Herald's signer but sent by `curl`: the sandbox accepts any client
/// that signs correctly, and Herald's signature holds outside URLSession.
@Suite struct SignedCurlTests {
    @Test func curlWithAHeraldSignatureReadsAndPosts() async throws {
        try await SandboxHarness.run { harness in
            let signer = OAuthSigner(credentials: harness.credentials)
            let timeline = try #require(URL(string: "\(harness.sandbox.baseURL)/1.1/statuses/home_timeline.json?count=2"))
            let read = try await Curl.run([
                "-H", "Authorization: \(signer.authorizationHeader(method: "GET", url: timeline))", timeline.absoluteString,
            ])
            let statuses = try JSONBodyDecoder.decode([Status].self, from: Data(read.stdout.utf8))
            #expect(statuses.count == 2)

            let update = try #require(URL(string: "\(harness.sandbox.baseURL)/1.1/statuses/update.json"))
            let form = [("status", "curl says こんにちは 👋 100% + more")]
            let posted = try await Curl.run([
                "-H", "Authorization: \(signer.authorizationHeader(method: "POST", url: update, bodyParameters: form))",
                "-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", FormBody.encode(form),
                update.absoluteString,
            ])
            #expect(try JSONBodyDecoder.decode(Status.self, from: Data(posted.stdout.utf8)).text == form[0].1)
            let recorded = try await Curl.run(["\(harness.sandbox.baseURL)/_sandbox/posts"])
            #expect(recorded.stdout.contains("こんにちは"))
        }
    }
}
