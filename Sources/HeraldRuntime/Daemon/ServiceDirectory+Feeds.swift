import Foundation
import HeraldServices

extension ServiceDirectory {
    /// The path of the embedded sandbox's webhook receiver.
    static let sandboxWebhookPath = "/_sandbox/webhooks"

    /// The webhook service `name` as a client; `"sandbox"` is the sandbox's receiver.
    func webhook(_ name: String, now: @escaping @Sendable () -> Date) throws(DaemonError) -> WebhookClient {
        guard case .webhook(let endpoint, let secret, let headers, let timeout)? = configuration.services[name] else {
            throw DaemonError("no webhook service named \(name)")
        }
        let url: URL = switch endpoint {
        case .url(let url): url
        case .sandbox: try base(.sandbox).appendingPathComponent(String(Self.sandboxWebhookPath.dropFirst()))
        }
        return WebhookClient(url: url, secret: secret, headers: headers, timeout: timeout, transport: transport(for: name), now: now)
    }

    /// A feed loader's transport: its `caFile` / `insecure` on every request, else the shared one.
    func transport(for feed: FeedSettings) -> any HTTPTransport {
        guard let tls = feed.tls else { return transport }
        return ServiceTLSTransport(base: transport, tls: tls)
    }

    /// A feed loader's URL, `sandbox:` paths resolved against the embedded sandbox.
    func feedURL(_ settings: FeedSettings) throws(DaemonError) -> URL {
        switch settings.location {
        case .url(let url): return url
        case .sandbox(let path):
            let base = try base(.sandbox)
            guard let url = URL(string: base.absoluteString + path) else { throw DaemonError("sandbox:\(path) is not a path") }
            return url
        }
    }
}
