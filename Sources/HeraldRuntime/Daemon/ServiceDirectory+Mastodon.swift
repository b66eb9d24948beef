import Foundation
import HeraldServices

extension ServiceDirectory {
    /// The mastodon service `name` as a client; media polls wait on `clock`, rate-limit resets
    /// are read against `now`.
    func mastodon(_ name: String, clock: any Clock<Duration>, now: @escaping @Sendable () -> Date) throws(DaemonError) -> MastodonClient {
        guard case .mastodon(let endpoint, let token, let timeout)? = configuration.services[name] else {
            throw DaemonError("no mastodon service named \(name)")
        }
        return MastodonClient(baseURL: try base(endpoint), token: token, transport: transport(for: name), clock: clock, now: now, timeout: timeout)
    }
}
