import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldSandbox

/// `GET /_sandbox/config` is readable by anyone on the machine: it shows the sandbox's own
/// published defaults, and never a credential someone configured (it may be a real one, from
/// the environment).
@Suite struct SandboxConfigEndpointTests {
    @Test func configuredKeysAndTokensAppearNowhereInTheResponse() async throws {
        var configuration = SandboxConfiguration()
        let secrets = ["MY-CONSUMER-KEY-4711", "MY-CONSUMER-SECRET-0815", "1-MY-ACCESS-TOKEN-42", "MY-TOKEN-SECRET-1337", "MY-APP-KEY-9000"]
        configuration.credentials = SandboxCredentials(
            consumerKey: secrets[0], consumerSecret: secrets[1], token: secrets[2], tokenSecret: secrets[3])
        configuration.baasApplicationKey = secrets[4]
        let sandbox = try await Sandbox.start(configuration)
        let response = try await Curl.run(["--include", "\(sandbox.baseURL)/_sandbox/config"])
        await sandbox.stop()

        #expect(response.status == 0, "curl: \(response.stderr)")
        #expect(response.stdout.contains("200"))
        for secret in secrets {
            #expect(!response.stdout.contains(secret), "\(secret) shown in: \(response.stdout)")
        }
        let body = try #require(response.stdout.range(of: "\r\n\r\n").map { response.stdout[$0.upperBound...] })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: [String: String]])
        let twitter = try #require(object["twitter"])
        for key in ["consumer_key", "consumer_secret", "access_token", "access_token_secret"] {
            #expect(twitter[key] == "(configured, not shown)", "\(key): \(twitter[key] ?? "missing")")
        }
        #expect(object["baas"]?["application_key"] == "(configured, not shown)")
    }

    /// The standard credentials are published anyway (`SandboxCredentials.standard`), so a
    /// tool can still read them here to sign its requests.
    @Test func theSandboxsOwnDefaultsAreShown() async throws {
        let sandbox = try await Sandbox.start()
        let response = try await Curl.run(["\(sandbox.baseURL)/_sandbox/config"])
        await sandbox.stop()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.stdout.utf8)) as? [String: [String: String]])
        let standard = SandboxCredentials.standard
        #expect(object["twitter"] == [
            "consumer_key": standard.consumerKey, "consumer_secret": standard.consumerSecret, "access_token": standard.token,
            "access_token_secret": standard.tokenSecret, "screen_name": "herald_sandbox",
            "oauth2_user_token": SandboxConfiguration().oauth2UserToken,
        ])
    }
}
