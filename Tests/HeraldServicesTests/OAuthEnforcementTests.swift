import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

/// The sandbox checks OAuth on every Twitter-style endpoint, and the signature it checks
/// covers the query and the form body, not only the `oauth_*` parameters.
@Suite struct OAuthEnforcementTests {
    private struct Endpoint {
        var method: String
        var path: String
        var query: String = ""
        var form: [(String, String)] = []
        var multipart = false
    }

    private static let endpoints = [
        Endpoint(method: "GET", path: "/1.1/statuses/home_timeline.json", query: "count=2"),
        Endpoint(method: "GET", path: "/1.1/statuses/home_timeline.xml", query: "count=2"),
        Endpoint(method: "GET", path: "/1.1/statuses/user_timeline.json", query: "screen_name=TwitterDev"),
        Endpoint(method: "GET", path: "/1.1/statuses/user_timeline.xml", query: "screen_name=TwitterDev"),
        Endpoint(method: "POST", path: "/1.1/statuses/update.json", form: [("status", "signed?")]),
        Endpoint(method: "POST", path: "/1.1/media/upload.json",
                 form: [("command", "INIT"), ("total_bytes", "10"), ("media_type", "video/mp4")]),
        Endpoint(method: "POST", path: "/1.1/media/upload.json", multipart: true),
        Endpoint(method: "POST", path: "/1.1/media/upload.json", form: [("command", "FINALIZE"), ("media_id", "1")]),
        Endpoint(method: "GET", path: "/1.1/media/upload.json", query: "command=STATUS&media_id=1"),
    ]

    private func request(_ endpoint: Endpoint, base: URL, signer: OAuthSigner?, signedQuery: String? = nil,
                         signedForm: [(String, String)]? = nil) throws -> HTTPRequest {
        let suffix = endpoint.query.isEmpty ? "" : "?" + endpoint.query
        let url = try #require(URL(string: base.absoluteString + endpoint.path + suffix))
        var headers = HTTPHeaders()
        var body: Data?
        if endpoint.multipart {
            let boundary = "b0undary"
            headers["Content-Type"] = "multipart/form-data; boundary=\(boundary)"
            body = Data(("--\(boundary)\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nAPPEND\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"media_id\"\r\n\r\n1\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"segment_index\"\r\n\r\n0\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"media\"; filename=\"blob\"\r\n\r\nxyz\r\n--\(boundary)--\r\n").utf8)
        } else if !endpoint.form.isEmpty {
            headers["Content-Type"] = FormBody.contentType
            body = Data(FormBody.encode(endpoint.form).utf8)
        }
        if let signer {
            let signedURL = try #require(URL(string: base.absoluteString + endpoint.path + (signedQuery.map { "?" + $0 } ?? suffix)))
            headers["Authorization"] = signer.authorizationHeader(
                method: endpoint.method, url: signedURL, bodyParameters: signedForm ?? endpoint.form)
        }
        return HTTPRequest(method: endpoint.method, url: url, headers: headers, body: body)
    }

    private func code(of response: HTTPResponse) -> Int? {
        let text = String(decoding: response.body, as: UTF8.self)
        guard let range = text.range(of: #""code":"#) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func everyTwitterEndpointRefusesMissingAndBadSignatures() async throws {
        try await SandboxHarness.run { harness in
            var wrong = harness.credentials
            wrong.tokenSecret = "not-the-token-secret"
            for endpoint in Self.endpoints {
                let label = "\(endpoint.method) \(endpoint.path) \(endpoint.query)\(endpoint.form.first?.1 ?? "")"
                let unsigned = try await harness.transport.send(try request(endpoint, base: harness.sandbox.baseURL, signer: nil))
                #expect(unsigned.status == 400, "\(label)")
                #expect(code(of: unsigned) == 215, "\(label)")
                let badlySigned = try await harness.transport.send(
                    try request(endpoint, base: harness.sandbox.baseURL, signer: OAuthSigner(credentials: wrong)))
                #expect(badlySigned.status == 401, "\(label)")
                #expect(code(of: badlySigned) == 32, "\(label)")
            }
            #expect(harness.sandbox.posts().isEmpty)
        }
    }

    @Test func signatureCoversTheQueryAndTheFormBody() async throws {
        try await SandboxHarness.run { harness in
            let signer = OAuthSigner(credentials: harness.credentials)
            let base = harness.sandbox.baseURL
            let timeline = Self.endpoints[0]
            let honest = try await harness.transport.send(try request(timeline, base: base, signer: signer))
            #expect(honest.status == 200)
            let otherQuery = try await harness.transport.send(try request(timeline, base: base, signer: signer, signedQuery: "count=3"))
            #expect(otherQuery.status == 401)
            #expect(code(of: otherQuery) == 32)

            let update = Self.endpoints[4]
            let otherForm = try await harness.transport.send(
                try request(update, base: base, signer: signer, signedForm: [("status", "something else")]))
            #expect(otherForm.status == 401)
            #expect(code(of: otherForm) == 32)
            let posted = try await harness.transport.send(try request(update, base: base, signer: signer))
            #expect(posted.status == 200)
            #expect(harness.sandbox.posts().map(\.text) == ["signed?"])
        }
    }
}
