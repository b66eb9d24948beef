import Foundation
import HeraldSandbox
import HeraldServices

/// The configured services as clients, with `"sandbox"` endpoints pointed at the embedded sandbox.
struct ServiceDirectory: Sendable {
    let configuration: HeraldConfiguration
    let sandbox: Sandbox?
    let transport: any HTTPTransport

    static func sandboxConfiguration(for configuration: HeraldConfiguration) -> SandboxConfiguration {
        configuration.sandboxConfiguration()
    }

    func base(_ endpoint: Endpoint) throws(DaemonError) -> URL {
        switch endpoint {
        case .url(let url): return url
        case .sandbox:
            guard let sandbox else { throw DaemonError("the sandbox is not running") }
            return sandbox.baseURL
        }
    }

    /// The transport for the service `name`: its `caFile` / `insecure` settings on every
    /// request that sets none of its own.
    func transport(for name: String) -> any HTTPTransport {
        guard let tls = configuration.serviceTLS[name] else { return transport }
        return ServiceTLSTransport(base: transport, tls: tls)
    }

    func twitter(_ name: String) throws(DaemonError) -> TwitterClient {
        guard case .twitter(let endpoint, let credentials, let timeout)? = configuration.services[name] else {
            throw DaemonError("no twitter service named \(name)")
        }
        return TwitterClient(baseURL: try base(endpoint), credentials: credentials, transport: transport(for: name), timeout: timeout)
    }

    func tiqav(_ name: String) throws(DaemonError) -> TiqavClient {
        guard case .tiqav(let endpoint, let timeout)? = configuration.services[name] else {
            throw DaemonError("no tiqav service named \(name)")
        }
        let baseURL = try base(endpoint)
        // The real Tiqav serves images from another host; anything else serves them under /img.
        var imageBase = baseURL.appendingPathComponent("img")
        if case .url(let url) = endpoint, url.host == "api.tiqav.com", let real = URL(string: "http://img.tiqav.com") {
            imageBase = real
        }
        return TiqavClient(baseURL: baseURL, imageBaseURL: imageBase, transport: transport(for: name), timeout: timeout)
    }

    func baas(_ name: String) throws(DaemonError) -> BaaSClient {
        guard case .baas(let endpoint, let tenant, let applicationID, let applicationKey, let timeout)? = configuration.services[name] else {
            throw DaemonError("no baas service named \(name)")
        }
        let settings = BaaSConfiguration(endpoint: try base(endpoint), tenantID: tenant, applicationID: applicationID,
                                         applicationKey: applicationKey)
        return BaaSClient(configuration: settings, transport: transport(for: name), timeout: timeout)
    }
}

extension HeraldConfiguration {
    /// The embedded sandbox's configuration: the `sandbox` section, accepting the credentials
    /// and BaaS keys that the services pointing at it are configured with. With `todoInterval`,
    /// the bucket that grows is the one the first todo loader (by id) on a sandbox BaaS service
    /// reads.
    public func sandboxConfiguration() -> SandboxConfiguration {
        var sandbox = SandboxConfiguration(port: self.sandbox.port, faults: self.sandbox.faults)
        if let interval = self.sandbox.statusInterval {
            // The feeds grow at the timeline's pace.
            sandbox.statusInterval = interval.timeInterval
            sandbox.feedInterval = interval.timeInterval
        }
        sandbox.todoInterval = self.sandbox.todoInterval.map(\.timeInterval)
        let todoBuckets = self.loaders.keys.sorted().compactMap { id -> String? in
            guard let loader = self.loaders[id], case .todo(let bucket) = loader.kind,
                case .baas(.sandbox, _, _, _, _)? = self.services[loader.service] else { return nil }
            return bucket
        }
        if let bucket = todoBuckets.first {
            sandbox.todoBucket = bucket
        }
        for name in self.services.keys.sorted() {
            switch self.services[name] {
            case .twitter(.sandbox, let credentials, _)?:
                sandbox.credentials = SandboxCredentials(
                    consumerKey: credentials.consumerKey, consumerSecret: credentials.consumerSecret,
                    token: credentials.token ?? "", tokenSecret: credentials.tokenSecret ?? "")
            case .x(.sandbox, let authorization, _)?:
                sandbox.acceptX(authorization)
            case .baas(.sandbox, let tenant, let applicationID, let applicationKey, _)?:
                sandbox.baasTenant = tenant
                sandbox.baasApplicationID = applicationID
                sandbox.baasApplicationKey = applicationKey
            case .mastodon(.sandbox, let token, _)?:
                sandbox.mastodon.token = token
            case .webhook(.sandbox, let secret?, _, _)?:
                sandbox.webhookSecret = secret.key
            default:
                break
            }
        }
        return sandbox
    }
}
