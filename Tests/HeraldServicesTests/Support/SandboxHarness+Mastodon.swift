import Foundation
import HeraldSandbox
import HeraldServices

extension SandboxHarness {
    /// A Mastodon client of the sandbox, polling media on the harness's clock (sleeps return at once).
    func mastodon(token: String? = nil, now: (@Sendable () -> Date)? = nil, maxMediaPolls: Int = 60) -> MastodonClient {
        let time = self.time
        return MastodonClient(baseURL: sandbox.baseURL, token: token ?? sandbox.configuration.mastodon.token, transport: transport,
                              clock: clock, now: now ?? { time.now }, maxMediaPolls: maxMediaPolls)
    }
}
