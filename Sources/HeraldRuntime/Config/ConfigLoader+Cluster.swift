import Foundation
import Herald
import HeraldCluster
import HeraldNATS
import HeraldSubscribers

extension ConfigLoader {
    /// The shortest lease TTL: a lease is renewed every third of it, over the network.
    public static let minimumLeaseTTL: Duration = .seconds(1)
    /// The shortest ack wait and dedupe window.
    public static let minimumClusterWait: Duration = .seconds(1)

    /// The `cluster` section, or nil when there is none (the daemon runs alone). `subscribers`
    /// tell whether the intent secret and the media directory are needed.
    func readCluster(_ value: ConfigJSON?, subscribers: [String: SubscriberConfiguration], baseDirectory: URL,
                     _ reader: ConfigReader) -> ClusterSettings? {
        guard let value else { return nil }
        let path = "cluster"
        let allowed = ["servers", "node", "export", "stream", "replicas", "leaseTTL", "dedupeWindow", "maxAge", "ackWait",
                       "postStream", "leaseBucket", "stateBucket", "startup", "connectWait", "maxPayload", "intentSecret",
                       "mediaDirectory", "auth", "tls"]
        guard let fields = reader.object(value, at: path, allowed: allowed) else { return nil }
        let servers = readServers(fields["servers"], reader)
        var node = reader.string(fields, "node", at: path, required: true)
        if let name = node, !ClusterSettings.isNodeName(name) {
            reader.report("\(path).node", "\"\(name)\" is not a node name (letters, digits, - and _, at most 64; \"\(ClusterSettings.externalNode)\" is reserved for publishers that are not Herald nodes)")
            node = nil
        }
        let export = fields["export"] == nil ? [">"] : readTopics(fields["export"], path: "\(path).export", reader)
        var names: [String: String] = [:]
        let defaults = ["stream": ClusterSettings.defaultStream, "postStream": ClusterSettings.defaultPostStream,
                        "leaseBucket": ClusterSettings.defaultLeaseBucket, "stateBucket": ClusterSettings.defaultStateBucket]
        for key in defaults.keys.sorted() {
            guard let name = reader.string(fields, key, at: path) else {
                if fields[key] == nil { names[key] = defaults[key] }
                continue
            }
            guard ClusterSettings.isResourceName(name) else {
                reader.report("\(path).\(key)", "\"\(name)\" is not a JetStream name (letters, digits, - and _, at most 32)")
                continue
            }
            names[key] = name
        }
        if let stream = names["stream"], stream == names["postStream"] {
            reader.report("\(path).postStream", "must differ from cluster.stream (\"\(stream)\")")
            names["postStream"] = nil
        }
        if let bucket = names["leaseBucket"], bucket == names["stateBucket"] {
            reader.report("\(path).stateBucket", "must differ from cluster.leaseBucket (\"\(bucket)\"): leases expire, states must not")
            names["stateBucket"] = nil
        }
        let replicas = fields["replicas"] == nil ? 1 : reader.integer(fields, "replicas", at: path, in: 1...5)
        if let replicas, let servers, replicas > servers.count {
            reader.report("\(path).replicas", "\(replicas) copies need at least \(replicas) servers in cluster.servers (\(servers.count) listed)")
        }
        let leaseTTL = minimum(reader.duration(fields, "leaseTTL", at: path, positive: true), Self.minimumLeaseTTL, "\(path).leaseTTL", reader)
        let dedupe = minimum(reader.duration(fields, "dedupeWindow", at: path, positive: true), Self.minimumClusterWait,
                             "\(path).dedupeWindow", reader)
        let maxAge = reader.duration(fields, "maxAge", at: path, positive: true)
        let ackWait = minimum(reader.duration(fields, "ackWait", at: path, positive: true), Self.minimumClusterWait, "\(path).ackWait", reader)
        let connectWait = reader.duration(fields, "connectWait", at: path)
        let maxPayload = reader.integer(fields, "maxPayload", at: path, in: ClusterSettings.maxPayloadRange)
        let startup = reader.choice(fields, "startup", at: path, among: ClusterSettings.Startup.allCases.map(\.rawValue))
            .flatMap(ClusterSettings.Startup.init(rawValue:))
        let posting = readPostingGuards(fields, subscribers: subscribers, baseDirectory: baseDirectory, reader)
        var settings = ClusterSettings(servers: servers ?? [], node: node ?? "")
        settings.intentSecret = posting.secret
        settings.mediaDirectory = posting.mediaDirectory
        if let leaseTTL { settings.leaseTTL = leaseTTL }
        if let dedupe { settings.dedupeWindow = dedupe }
        if let maxAge { settings.maxAge = maxAge }
        if let ackWait { settings.ackWait = ackWait }
        if let connectWait { settings.connectWait = connectWait }
        if let startup { settings.startup = startup }
        if let maxPayload { settings.maxPayload = maxPayload }
        if let tls = fields["tls"] { settings.tls = readClusterTLS(tls, baseDirectory: baseDirectory, reader) }
        if let auth = fields["auth"] { settings.authentication = readClusterAuthentication(auth, baseDirectory: baseDirectory, reader) }
        if settings.dedupeWindow > settings.maxAge {
            reader.report("\(path).dedupeWindow", "\(DurationText.format(settings.dedupeWindow)) is longer than cluster.maxAge (\(DurationText.format(settings.maxAge))); JetStream refuses that")
        }
        guard let servers, let node, let export, let replicas, let stream = names["stream"], let postStream = names["postStream"],
              let leaseBucket = names["leaseBucket"], let stateBucket = names["stateBucket"] else { return nil }
        settings.servers = servers
        settings.node = node
        settings.export = export
        settings.replicas = replicas
        settings.stream = stream
        settings.postStream = postStream
        settings.leaseBucket = leaseBucket
        settings.stateBucket = stateBucket
        return settings
    }

    /// `intentSecret` (required when any post rule exists: every intent on the post queue is
    /// signed with it) and `mediaDirectory` (required when a rule posts media: the only place a
    /// node reads media named by an intent from the queue).
    private func readPostingGuards(_ fields: [String: ConfigJSON], subscribers: [String: SubscriberConfiguration], baseDirectory: URL,
                                   _ reader: ConfigReader) -> (secret: String?, mediaDirectory: URL?) {
        let path = "cluster"
        var rules: [PostRule] = []
        for name in subscribers.keys.sorted() {
            if case .post(let posting)? = subscribers[name] { rules += posting.rules }
        }
        var secret: String?
        if fields["intentSecret"] != nil {
            secret = reader.secret(fields, "intentSecret", at: path)
            if let value = secret, value.utf8.count < IntentAuthenticator.minimumSecretLength {
                reader.report("\(path).intentSecret", "shorter than \(IntentAuthenticator.minimumSecretLength) bytes; make one with `openssl rand -base64 32`")
                secret = nil
            } else if let value = secret {
                // What run needs to sign with it: the system's HMAC-SHA256, checked here too.
                do {
                    _ = try IntentAuthenticator(secret: value)
                } catch {
                    reader.report("\(path).intentSecret", "cannot be used: \(error)")
                    secret = nil
                }
            }
        } else if let rule = rules.first {
            reader.report("\(path).intentSecret", "required: post rules (\(rule.name)) run in the cluster, and every node signs and checks the post queue's intents with this secret, the same on every node (make one with `openssl rand -base64 32`; write it as {\"env\": \"HERALD_CLUSTER_SECRET\"})")
        }
        var directory: URL?
        if let text = reader.string(fields, "mediaDirectory", at: path) {
            if text.isEmpty {
                reader.report("\(path).mediaDirectory", "must not be empty")
            } else {
                directory = Self.resolve(text, against: baseDirectory)
            }
        }
        for rule in rules {
            guard let media = rule.target.mediaSource else { continue }
            guard let directory else {
                if fields["mediaDirectory"] == nil {
                    reader.report("\(path).mediaDirectory", "required: rule \(rule.name) posts media, and a cluster node reads media named by the post queue only from this directory")
                }
                return (secret, nil)
            }
            if case .file(let file) = media {
                let resolved = Self.resolve(file, against: baseDirectory).standardizedFileURL.path
                let root = directory.standardizedFileURL.path
                if !resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") {
                    reader.report("\(path).mediaDirectory", "rule \(rule.name) posts \(file), which is outside \(root): a node would refuse it")
                }
            }
        }
        return (secret, directory)
    }

    private func minimum(_ value: Duration?, _ least: Duration, _ path: String, _ reader: ConfigReader) -> Duration? {
        guard let value else { return nil }
        guard value >= least else {
            reader.report(path, "\(DurationText.format(value)) is below the minimum of \(DurationText.format(least))")
            return nil
        }
        return value
    }

    /// `servers`: a non-empty array of `nats://host[:port]` URLs, without credentials, each
    /// server once. Each is read by the NATS client's own address parser too, so a server the
    /// client would refuse at start is refused here.
    private func readServers(_ value: ConfigJSON?, _ reader: ConfigReader) -> [URL]? {
        let path = "cluster.servers"
        guard let value else {
            reader.report(path, "required (for example [\"nats://127.0.0.1:4222\"])")
            return nil
        }
        guard case .array(let items) = value, !items.isEmpty else {
            reader.report(path, "expected a non-empty array of nats:// URLs, got \(value.shown)")
            return nil
        }
        var servers: [URL] = []
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let here = "\(path)[\(index)]"
            guard case .string(let text) = item else {
                reader.report(here, "expected a nats:// URL, got \(item.shown)")
                continue
            }
            // Never echo a text with a credential, even one URL cannot read.
            guard ConfigReader.authority(text)?.contains("@") != true else {
                reader.report(here, "credentials in a server URL are not supported")
                continue
            }
            guard let url = URL(string: text), ["nats", "tls"].contains(url.scheme?.lowercased() ?? ""), let host = url.host, !host.isEmpty,
                  url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil, url.password == nil else {
                reader.report(here, "\"\(text)\" is not a nats://host[:port] or tls://host[:port] URL")
                continue
            }
            if let port = ConfigReader.writtenPort(text), !port.isEmpty, !(1...65535).contains(url.port ?? 0) {
                reader.report(here, "\"\(text)\": the port is not in 1...65535")
                continue
            }
            let address: NATSServerAddress
            do {
                address = try NATSServerAddress(parsing: url.absoluteString)
            } catch {
                reader.report(here, "\"\(text)\" is not a nats://host[:port] or tls://host[:port] URL")
                continue
            }
            let endpoint = "\(address.host.lowercased()):\(address.port)"
            if let first = seen[endpoint] {
                reader.report(here, "\"\(text)\" is the same server as \(path)[\(first)]; list each server once")
                continue
            }
            seen[endpoint] = index
            servers.append(url)
        }
        return servers.count == items.count ? servers : nil
    }
}

extension ConfigLoader {
    /// `cluster.auth`: exactly one of `{"token"}`, `{"user", "password"}`, `{"nkeySeed"}` or
    /// `{"credentials": "path/to/user.creds"}` (relative to the config file). Secrets may come
    /// from the environment (`{"env": NAME}`); the credentials file is read and checked here.
    func readClusterAuthentication(_ value: ConfigJSON, baseDirectory: URL, _ reader: ConfigReader) -> ClusterAuthentication? {
        let path = "cluster.auth"
        let kinds = [["token"], ["user", "password"], ["nkeySeed"], ["credentials"]]
        guard let fields = reader.object(value, at: path, allowed: kinds.flatMap { $0 }) else { return nil }
        let given = kinds.filter { kind in kind.contains { fields[$0] != nil } }
        guard given.count == 1, let kind = given.first else {
            reader.report(path, given.isEmpty
                ? "expected one of {\"token\"}, {\"user\", \"password\"}, {\"nkeySeed\"} or {\"credentials\": \"path/to/user.creds\"}"
                : "give one way to authenticate, not \(given.map { $0.joined(separator: " and ") }.joined(separator: ", "))")
            return nil
        }
        switch kind[0] {
        case "token":
            return reader.secret(fields, "token", at: path).map(ClusterAuthentication.token)
        case "user":
            let user = reader.string(fields, "user", at: path, required: true)
            let password = reader.secret(fields, "password", at: path)
            guard let user, let password else { return nil }
            return .userPassword(user: user, password: password)
        case "nkeySeed":
            guard let seed = reader.secret(fields, "nkeySeed", at: path) else { return nil }
            do throws(NATSError) {
                return .nkey(try NATSNKeyPair(seed: seed))
            } catch {
                reader.report("\(path).nkeySeed", error.message)
                return nil
            }
        default:
            guard let file = reader.string(fields, "credentials", at: path) else { return nil }
            let url = Self.resolve(file, against: baseDirectory)
            do throws(NATSError) {
                return .credentials(try NATSUserCredentials(contentsOf: url.path))
            } catch {
                reader.report("\(path).credentials", error.message)
                return nil
            }
        }
    }
}
