import Foundation
import HeraldRuntime
import Testing

/// An error about a secret says what type was found, never the value: `herald check` output
/// ends up in terminals, CI logs and bug reports.
@Suite struct ConfigSecretTests {
    /// (path, the JSON put there, the secret that must not appear, the exact message expected)
    @Test(arguments: [
        ("services.twitter.auth.tokenSecret", "987654321", "987654321",
         #"services.twitter.auth.tokenSecret: expected a string or {"env": "NAME", "default": "…"}, got a number"#),
        ("services.twitter.auth.consumerKey", "true", "true",
         #"services.twitter.auth.consumerKey: expected a string or {"env": "NAME", "default": "…"}, got a boolean"#),
        ("services.twitter.auth.token", #"{"env": "TW_TOKEN", "default": 1234567}"#, "1234567",
         "services.twitter.auth.token.default: expected a string, got a number"),
        ("services.twitter.auth.consumerSecret", #"{"env": 7654321}"#, "7654321",
         "services.twitter.auth.consumerSecret.env: expected a string, got a number"),
        ("services.twitter.auth", #""sk-live-abcdef""#, "sk-live-abcdef", "services.twitter.auth: expected an object, got a string"),
        ("services.baas.appKey", "31415926", "31415926",
         #"services.baas.appKey: expected a string or {"env": "NAME", "default": "…"}, got a number"#),
    ] as [(String, String, String, String)])
    func aSecretsValueIsNeverInAnError(path: String, json: String, secret: String, expected: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: path, to: value))
        #expect(issues.contains(expected), "got \(issues)")
        #expect(!issues.joined(separator: "\n").contains(secret), "got \(issues)")
    }

    /// Other fields still show what was written: that is what makes the errors useful.
    @Test func otherFieldsStillShowTheirValue() {
        let issues = ConfigFixtures.issues(ConfigFixtures.demo(setting: "sandbox.port", to: "8080"))
        #expect(issues == [#"sandbox.port: expected an integer, got "8080""#])
    }
}
