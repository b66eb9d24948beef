import Foundation
import HeraldSandbox
import HeraldServices

extension ServiceDirectory {
    /// The X API v2 client of a twitter service with `"api": "v2"`.
    func x(_ name: String) throws(DaemonError) -> XClient {
        guard case .x(let endpoint, let authorization, let timeout)? = configuration.services[name] else {
            throw DaemonError("no twitter service with \"api\": \"v2\" named \(name)")
        }
        let baseURL: URL
        switch endpoint {
        case .url(let url): baseURL = url
        case .sandbox:
            guard let sandbox else { throw DaemonError("the sandbox is not running") }
            baseURL = sandbox.baseURL
        }
        return XClient(baseURL: baseURL, authorization: authorization, transport: transport(for: name), timeout: timeout)
    }
}

extension SandboxConfiguration {
    /// Accepts what an X API v2 service on the sandbox is configured with: its OAuth 1.0a
    /// secrets, or its OAuth 2.0 user access token.
    mutating func acceptX(_ authorization: XAuthorization) {
        switch authorization {
        case .oauth1(let credentials):
            self.credentials = SandboxCredentials(
                consumerKey: credentials.consumerKey, consumerSecret: credentials.consumerSecret,
                token: credentials.token ?? "", tokenSecret: credentials.tokenSecret ?? "")
        case .bearer(let token):
            oauth2UserToken = token
        }
    }
}
