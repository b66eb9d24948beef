import Foundation
import HeraldCluster
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSubscribers

/// Reads and validates `config.json` completely before anything starts.
///
/// Every problem is reported at once, each naming its JSON path
/// (`loaders.home.every: "30x" is not a duration`); unknown keys are errors (with a guess at
/// the intended key); a loader must name an existing service of the right kind. A key written
/// twice in one object and a trailing comma are errors too, found in the text before anything
/// else is checked. An error about a secret names the type found, never the value. Secrets may be
/// written as `{"env": "NAME", "default": "value"}` and are read from ``environment``.
public struct ConfigLoader: Sendable {
    /// The environment secrets are read from.
    public var environment: [String: String]

    /// Creates a loader reading secrets from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Reads the file at `url`; relative paths inside it are resolved against its directory.
    ///
    /// - Throws: ``ConfigError`` listing every problem (a missing file is one problem).
    public func load(contentsOf url: URL) throws(ConfigError) -> HeraldConfiguration {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            let reason = FileManager.default.fileExists(atPath: url.path) ? "cannot be read" : "no such file"
            throw ConfigError(issues: [ConfigIssue(path: "", message: "\(url.relativePath): \(reason)")])
        }
        return try parse(data, baseDirectory: url.deletingLastPathComponent())
    }

    /// Parses and validates a configuration.
    ///
    /// - Throws: ``ConfigError`` listing every problem.
    public func parse(_ data: Data, baseDirectory: URL) throws(ConfigError) -> HeraldConfiguration {
        // A duplicate key or a trailing comma stops here, as a syntax error does: the parsed
        // document may not be what the file means to other tools.
        let textIssues = ConfigTextScanner.issues(in: data)
        let root: ConfigJSON
        do {
            root = try JSONDecoder().decode(ConfigJSON.self, from: data)
        } catch {
            if !textIssues.isEmpty { throw ConfigError(issues: textIssues) }
            throw ConfigError(issues: [ConfigIssue(path: "", message: "not valid JSON: \(Self.syntaxReason(error, in: data))")])
        }
        if !textIssues.isEmpty { throw ConfigError(issues: textIssues) }
        let reader = ConfigReader(environment: environment)
        let keys = ["$schema", "state", "services", "loaders", "subscribers", "sandbox", "http", "cluster"]
        guard let top = reader.object(root, at: "", allowed: keys) else { throw ConfigError(issues: reader.issues) }
        let state = reader.string(top, "state", at: "") ?? "var/state"
        let services = readServices(top["services"], reader)
        let serviceTLS = readServicesTLS(top["services"], baseDirectory: baseDirectory, reader)
        let loaders = readLoaders(top["loaders"], services: services, onSandbox: Self.sandboxServices(top["services"]),
                                  baseDirectory: baseDirectory, reader)
        // Loaders written but invalid are already reported; a rule naming one gets no second error.
        let loaderIDs: Set<String> = if case .object(let entries)? = top["loaders"] { Set(entries.keys) } else { [] }
        let subscribers = readSubscribers(top["subscribers"], services: services, loaders: loaders, loaderIDs: loaderIDs,
                                          baseDirectory: baseDirectory, reader)
        checkStateDirectory(state, loaders: loaders, subscribers: subscribers, baseDirectory: baseDirectory, reader)
        let sandbox = readSandbox(top["sandbox"], reader)
        let http = readHTTP(top["http"], reader)
        checkPorts(http: http, sandbox: sandbox, services: services, reader)
        let cluster = readCluster(top["cluster"], subscribers: subscribers, baseDirectory: baseDirectory, reader)
        guard reader.issues.isEmpty, let services = services.map({ $0.compactMapValues { $0 } }) else {
            throw ConfigError(issues: reader.issues)
        }
        return HeraldConfiguration(
            directory: baseDirectory, stateDirectory: Self.resolve(state, against: baseDirectory), services: services, loaders: loaders,
            subscribers: subscribers, sandbox: sandbox, cluster: cluster, secrets: reader.secrets, http: http,
            source: ConfigSource(data: data, loadedAt: Date(), sections: top), serviceTLS: serviceTLS)
    }

    /// The services written with `"url": "sandbox"`, valid or not (a loader's minimum interval
    /// depends on it, and an invalid service is reported where it is written).
    private static func sandboxServices(_ value: ConfigJSON?) -> Set<String> {
        guard case .object(let entries)? = value else { return [] }
        return Set(entries.compactMap { name, service in
            if case .object(let fields) = service, fields["url"] == .string("sandbox") { name } else { nil }
        })
    }

    static func resolve(_ path: String, against base: URL) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path).standardizedFileURL
    }

    private static func syntaxReason(_ error: any Error, in data: Data) -> String {
        // JSONDecoder on Linux says only "not valid JSON"; find where.
        if let syntax = JSONBodyDecoder.syntaxError(in: data) {
            return "\(syntax.reason.trimmingCharacters(in: CharacterSet(charactersIn: "."))) at \(syntax.location)"
        }
        guard case DecodingError.dataCorrupted(let context) = error else { return String(describing: error) }
        if let underlying = context.underlyingError { return "\(underlying.localizedDescription)" }
        return context.debugDescription
    }

    // MARK: Services

    /// Services by name; a name maps to nil when it exists but is invalid (so loaders referring
    /// to it get no second error). Nil when the section itself is unusable.
    private func readServices(_ value: ConfigJSON?, _ reader: ConfigReader) -> [String: ServiceConfiguration?]? {
        guard let value else {
            reader.report("services", "required")
            return nil
        }
        guard case .object(let entries) = value else {
            reader.report("services", "expected an object, got \(value.shown)")
            return nil
        }
        var services: [String: ServiceConfiguration?] = [:]
        for name in entries.keys.sorted() {
            services[name] = .some(readService(name, entries[name] ?? .null, reader))
        }
        return services
    }

    private func readService(_ name: String, _ value: ConfigJSON, _ reader: ConfigReader) -> ServiceConfiguration? {
        let path = "services.\(name)"
        let kinds = ["twitter", "tiqav", "baas", "mastodon", "webhook"]
        var kind: String?
        if case .object(let fields) = value, fields["kind"] != nil {
            kind = reader.choice(fields, "kind", at: path, among: kinds)
            guard kind != nil else { return nil }
        } else if kinds.contains(name) {
            kind = name
        } else if case .object = value {
            reader.report("\(path).kind", "required (twitter, tiqav, baas, mastodon or webhook) when the service is not named after its kind")
            return nil
        }
        switch kind {
        case "twitter":
            if Self.twitterAPI(value, at: path, reader) == "v2" { return readXService(value, at: path, reader) }
            guard let fields = reader.object(value, at: path, allowed: ["kind", "url", "api", "auth", "timeout"] + Self.tlsKeys) else { return nil }
            let endpoint = reader.endpoint(fields, "url", at: path, required: true)
            let timeout = reader.duration(fields, "timeout", at: path, positive: true)
            guard let auth = fields["auth"] else {
                reader.report("\(path).auth", "required")
                return nil
            }
            let authPath = "\(path).auth"
            guard let keys = reader.object(auth, at: authPath, allowed: ["consumerKey", "consumerSecret", "token", "tokenSecret"])
            else { return nil }
            let consumerKey = reader.secret(keys, "consumerKey", at: authPath)
            let consumerSecret = reader.secret(keys, "consumerSecret", at: authPath)
            let token = reader.secret(keys, "token", at: authPath)
            let tokenSecret = reader.secret(keys, "tokenSecret", at: authPath)
            guard let endpoint, let consumerKey, let consumerSecret, let token, let tokenSecret else { return nil }
            let credentials = OAuthCredentials(consumerKey: consumerKey, consumerSecret: consumerSecret,
                                               token: token, tokenSecret: tokenSecret)
            return .twitter(endpoint: endpoint, credentials: credentials, timeout: timeout)
        case "tiqav":
            guard let fields = reader.object(value, at: path, allowed: ["kind", "url", "timeout"] + Self.tlsKeys) else { return nil }
            let endpoint = reader.endpoint(fields, "url", at: path, required: true)
            let timeout = reader.duration(fields, "timeout", at: path, positive: true)
            return endpoint.map { .tiqav(endpoint: $0, timeout: timeout) }
        case "mastodon":
            return readMastodonService(value, at: path, reader)
        case "webhook":
            return readWebhookService(value, at: path, reader)
        default:
            let allowed = ["kind", "url", "tenant", "appId", "appKey", "timeout"] + Self.tlsKeys
            guard let fields = reader.object(value, at: path, allowed: allowed) else { return nil }
            let endpoint = reader.endpoint(fields, "url", at: path, required: true)
            let tenant = reader.string(fields, "tenant", at: path, required: true)
            let appID = reader.string(fields, "appId", at: path, required: true)
            let appKey = reader.secret(fields, "appKey", at: path)
            let timeout = reader.duration(fields, "timeout", at: path, positive: true)
            guard let endpoint, let tenant, let appID, let appKey else { return nil }
            return .baas(endpoint: endpoint, tenant: tenant, applicationID: appID, applicationKey: appKey, timeout: timeout)
        }
    }
}
