import Foundation
import HeraldSandbox
import HeraldServices

extension SandboxHarness {
    /// An X API v2 client on the sandbox: OAuth 1.0a user context with the sandbox's
    /// credentials, or the given OAuth 2.0 user token.
    func x(bearer: String? = nil, segmentSize: Int = TwitterClient.maxSegmentSize, maxStatusPolls: Int = 60) -> XClient {
        XClient(baseURL: sandbox.baseURL, authorization: bearer.map { .bearer($0) } ?? .oauth1(credentials), transport: transport,
                clock: clock, segmentSize: segmentSize, maxStatusPolls: maxStatusPolls)
    }
}
