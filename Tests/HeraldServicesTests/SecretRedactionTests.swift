import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport
import HeraldTesting

/// Records every request a client sends, then passes it on.
private final class RecordingTransport: HTTPTransport {
    private let requests = Recording<HTTPRequest>()
    private let next: any HTTPTransport

    init(_ next: any HTTPTransport) { self.next = next }

    var sent: [HTTPRequest] { requests.values }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.append(request)
        return try await next.send(request)
    }
}

/// Secrets (consumer and token secrets, signatures, application keys, session tokens) never
/// show in what a caller is likely to log: descriptions, debug descriptions, dumps, errors.
@Suite struct SecretRedactionTests {
    private func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped]
    }

    @Test func signedRequestsClientsAndErrorsDoNotShowSecrets() async throws {
        try await SandboxHarness.run { harness in
            let recording = RecordingTransport(harness.transport)
            var credentials = harness.credentials
            let twitter = TwitterClient(baseURL: harness.sandbox.baseURL, credentials: credentials, transport: recording)
            _ = try await twitter.update(status: "logged safely")
            credentials.consumerSecret = "wrong-consumer-secret"
            let error = await serviceError {
                try await TwitterClient(baseURL: harness.sandbox.baseURL, credentials: credentials, transport: recording).homeTimeline()
            }
            #expect(error?.hasAPIError(code: 32) == true)

            var baasConfiguration = harness.baas().configuration
            baasConfiguration.sessionToken = "session-token-value"
            let baas = BaaSClient(configuration: baasConfiguration, transport: recording)
            _ = try await baas.create(bucket: "todos", fields: ["description": .string("x")])

            let requests = recording.sent
            #expect(requests.count == 3)
            let signatures = requests.compactMap { $0.headers["Authorization"] }
                .compactMap { $0.components(separatedBy: "oauth_signature=\"").dropFirst().first?.prefix { $0 != "\"" } }
                .map(String.init)
            #expect(signatures.count == 2)
            let secrets = [
                harness.credentials.consumerSecret, harness.credentials.tokenSecret ?? "", "wrong-consumer-secret",
                baasConfiguration.applicationKey, "session-token-value",
            ] + signatures
            let logged: [Any] = requests.map { $0 as Any } + [twitter, credentials, baas, baasConfiguration, error as Any]
            for value in logged {
                for text in renderings(value) {
                    for secret in secrets where !secret.isEmpty {
                        #expect(!text.contains(secret), "\(secret) shows in \(text)")
                    }
                }
            }
            // Redaction keeps what is useful for diagnosis.
            #expect(String(describing: requests[0].headers).contains("Authorization: <redacted>"))
            #expect(String(describing: requests[2].headers).contains("X-Application-Id: \(baasConfiguration.applicationID)"))
        }
    }
}
