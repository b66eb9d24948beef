import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldSandbox

/// The sandbox must serve an ordinary HTTP client, not only Herald's own.
@Suite struct CurlAgainstSandboxTests {
    @Test func curlReadsTiqavAndTheSandboxConfig() async throws {
        let sandbox = try await Sandbox.start()
        let search = try await Curl.run(["\(sandbox.baseURL)/search.json?q=%E7%8C%AB"])
        #expect(search.status == 0)
        #expect(search.stdout.hasPrefix("[{\"id\":\"3om\""))
        let config = try await Curl.run(["\(sandbox.baseURL)/_sandbox/config"])
        #expect(config.stdout.contains("\"consumer_key\":\"sandbox-consumer-key\""))
        let notFound = try await Curl.run(["--write-out", "%{http_code}", "--output", "/dev/null", "\(sandbox.baseURL)/search.json?q=zzzz"])
        #expect(notFound.stdout == "404")
        await sandbox.stop()
    }

    @Test func theSandboxConfigNeverShowsConfiguredSecrets() async throws {
        var configuration = SandboxConfiguration()
        configuration.credentials = SandboxCredentials(
            consumerKey: "my-key", consumerSecret: "MY-REAL-SECRET", token: "1-my-token", tokenSecret: "MY-TOKEN-SECRET")
        configuration.baasApplicationKey = "MY-APP-KEY"
        let sandbox = try await Sandbox.start(configuration)
        let config = try await Curl.run(["\(sandbox.baseURL)/_sandbox/config"])
        #expect(config.stdout.contains("\"consumer_key\":\"(configured, not shown)\""))
        for secret in ["MY-REAL-SECRET", "MY-TOKEN-SECRET", "MY-APP-KEY"] {
            #expect(!config.stdout.contains(secret))
        }
        await sandbox.stop()
    }

    @Test func curlReusesOneKeepAliveConnection() async throws {
        let sandbox = try await Sandbox.start()
        let result = try await Curl.run(["--verbose", "\(sandbox.baseURL)/_sandbox/health", "\(sandbox.baseURL)/search/random.json"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("{\"status\":\"ok\"}["))
        #expect(result.stderr.contains("Re-using existing connection") || result.stderr.contains("Reusing existing"))
        await sandbox.stop()
    }

    @Test func curlPostsChunkedAndExpectContinueBodiesToBaaS() async throws {
        let sandbox = try await Sandbox.start()
        let url = "\(sandbox.baseURL)/1/sandbox-tenant/objects/todos"
        let headers = ["-H", "X-Application-Id: sandbox-app-id", "-H", "X-Application-Key: sandbox-app-key", "-H", "Content-Type: application/json"]
        let chunked = try await Curl.run(headers + ["-H", "Transfer-Encoding: chunked", "--data-binary", #"{"description":"チャンク"}"#, url])
        #expect(chunked.stdout.contains(#""description":"チャンク""#))
        let expecting = try await Curl.run(headers + ["-H", "Expect: 100-continue", "--data-binary", #"{"description":"continue"}"#, url])
        #expect(expecting.stdout.contains(#""description":"continue""#))
        let listed = try await Curl.run(headers + ["\(url)?count=1&order=-updatedAt"])
        #expect(listed.stdout.contains(#""count":2"#))
        let unauthorized = try await Curl.run(["--write-out", "%{http_code}", "--output", "/dev/null", url])
        #expect(unauthorized.stdout == "401")
        await sandbox.stop()
    }

    @Test func unsignedTwitterRequestIsRefusedWith215() async throws {
        let sandbox = try await Sandbox.start()
        let result = try await Curl.run(["--write-out", " %{http_code}", "\(sandbox.baseURL)/1.1/statuses/home_timeline.json"])
        #expect(result.stdout == #"{"errors":[{"code":215,"message":"Bad Authentication data."}]} 400"#)
        await sandbox.stop()
    }
}
