import Foundation
import HeraldIO
import HeraldCluster
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSubscribers

/// A validated `config.json`: services, loaders, subscribers, the state directory, the
/// embedded sandbox's settings and the status endpoint's address. Made by ``ConfigLoader``; secrets are already resolved from
/// the environment.
public struct HeraldConfiguration: Sendable {
    /// The directory of the configuration file; relative paths in it are resolved against it.
    public var directory: URL
    /// Where loaders keep their state files (absolute, resolved against the config's directory).
    public var stateDirectory: URL
    /// The services, by name.
    public var services: [String: ServiceConfiguration]
    /// The loaders, by id.
    public var loaders: [String: LoaderConfiguration]
    /// The subscribers, by name.
    public var subscribers: [String: SubscriberConfiguration]
    /// The embedded sandbox, started when a service's url is `"sandbox"`.
    public var sandbox: SandboxSettings
    /// The `cluster` section: with it the daemon is one node of several on NATS JetStream;
    /// without it (nil) it runs alone.
    public var cluster: ClusterSettings?
    /// Every secret value, for redaction.
    public var secrets: [String]
    /// The status endpoint (metrics, `/status`, the live page); nil when there is none.
    public var http: HTTPSettings? = nil
    /// The file's hash, when it was read and its sections as written (nil for a configuration
    /// made in code).
    public var source: ConfigSource? = nil
    /// How the `https` services with a `caFile` or `"insecure": true` are verified, by service
    /// name; a service not here is verified against the system's CA store.
    public var serviceTLS: [String: TLSConfiguration] = [:]

    /// What `herald check` (and `herald run`) warn about: each service and each feed loader whose
    /// certificate and host-name verification is off, with the JSON path that turns it off.
    public var warnings: [String] {
        let services = serviceTLS.keys.sorted().filter { serviceTLS[$0]?.insecure == true }.map {
            "services.\($0).insecure: certificate and host-name verification are off for this service; "
                + "anyone on the network path can read and change its traffic, credentials included"
        }
        let feeds = loaders.keys.sorted().filter { id in
            if case .feed(let feed)? = loaders[id]?.kind { feed.tls?.insecure == true } else { false }
        }.map {
            "loaders.\($0).insecure: certificate and host-name verification are off for this feed; "
                + "anyone on the network path can read and change what it announces"
        }
        return services + feeds
    }

    /// Whether some service, or some feed loader, points at the embedded sandbox.
    public var usesSandbox: Bool {
        services.values.contains { $0.endpoint == .sandbox }
            || loaders.values.contains { if case .feed(let feed) = $0.kind, case .sandbox = feed.location { true } else { false } }
    }
}

/// Where a service lives.
public enum Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The embedded sandbox.
    case sandbox
    /// A real endpoint.
    case url(URL)

    /// `sandbox` or the URL.
    public var description: String {
        switch self {
        case .sandbox: "sandbox"
        case .url(let url): url.absoluteString
        }
    }
}

/// One service of `services`.
public enum ServiceConfiguration: Sendable {
    /// A Twitter-style API, signed with OAuth 1.0a.
    case twitter(endpoint: Endpoint, credentials: OAuthCredentials, timeout: Duration?)
    /// X API v2 (`"kind": "twitter"` with `"api": "v2"`): OAuth 1.0a user context or an
    /// OAuth 2.0 user access token.
    case x(endpoint: Endpoint, authorization: XAuthorization, timeout: Duration?)
    /// The Tiqav image search.
    case tiqav(endpoint: Endpoint, timeout: Duration?)
    /// An NEC BaaS tenant.
    case baas(endpoint: Endpoint, tenant: String, applicationID: String, applicationKey: String, timeout: Duration?)
    /// A Mastodon server (or one speaking its API), with a bearer token.
    case mastodon(endpoint: Endpoint, token: String, timeout: Duration?)
    /// A webhook endpoint (the sandbox's is `/_sandbox/webhooks`): deliveries signed with the
    /// Standard Webhooks secret when there is one, with extra header fields.
    case webhook(endpoint: Endpoint, secret: WebhookSecret?, headers: [String: String], timeout: Duration?)

    /// The service's kind as written in the config: `twitter`, `tiqav`, `baas`, `mastodon`, `webhook`.
    public var kind: String {
        switch self {
        case .twitter, .x: "twitter"
        case .tiqav: "tiqav"
        case .baas: "baas"
        case .mastodon: "mastodon"
        case .webhook: "webhook"
        }
    }

    /// Where it lives.
    public var endpoint: Endpoint {
        switch self {
        case .twitter(let endpoint, _, _), .x(let endpoint, _, _), .tiqav(let endpoint, _), .baas(let endpoint, _, _, _, _),
             .mastodon(let endpoint, _, _), .webhook(let endpoint, _, _, _): endpoint
        }
    }
}

/// One loader of `loaders`.
public struct LoaderConfiguration: Sendable {
    /// What the loader reads.
    public enum Kind: Sendable, Hashable {
        /// A timeline.
        case timeline(TimelineLoader.Request)
        /// A timeline of an X API v2 service (`"kind": "timeline"` on a service with `"api": "v2"`).
        case xTimeline(XTimelineLoader.Request)
        /// Tiqav images.
        case tiqav(TiqavLoader.Request)
        /// A BaaS bucket of todos.
        case todo(bucket: String)
        /// A Mastodon timeline.
        case mastodon(MastodonLoader.Request)
        /// An RSS or Atom feed.
        case feed(FeedSettings)

        /// `timeline`, `tiqav`, `todo`, `mastodon` or `feed`.
        public var name: String {
            switch self {
            case .timeline, .xTimeline: "timeline"
            case .tiqav: "tiqav"
            case .todo: "todo"
            case .mastodon: "mastodon"
            case .feed: "feed"
            }
        }
    }

    /// The id (the key in `loaders`), used in topics.
    public var id: String
    /// The service it calls (a key of `services`); empty for a feed loader, which names its URL itself.
    public var service: String
    /// What it reads.
    public var kind: Kind
    /// When it runs.
    public var schedule: SchedulePolicy
}

/// One subscriber of `subscribers`: one case per `kind`, each with only that kind's settings.
public enum SubscriberConfiguration: Sendable {
    /// `"kind": "log"`: matching events as log lines.
    case log(LogSettings)
    /// `"kind": "file"`: every matching event archived as a JSON line.
    case file(ArchiveSettings)
    /// `"kind": "post"`: rules that turn events into posts.
    case post(PostingSettings)

    /// The name (the key in `subscribers`).
    public var name: String {
        switch self {
        case .log(let settings): settings.name
        case .file(let settings): settings.name
        case .post(let settings): settings.name
        }
    }

    /// The topics it receives (a post subscriber's are its rules' `on` patterns).
    public var topics: [String] {
        switch self {
        case .log(let settings): settings.topics
        case .file(let settings): settings.topics
        case .post(let settings): settings.topics
        }
    }

    /// The kind as written in the config: `log`, `file` or `post`.
    public var kind: String {
        switch self {
        case .log: "log"
        case .file: "file"
        case .post: "post"
        }
    }
}

/// A `"kind": "log"` subscriber: matching events as log lines.
public struct LogSettings: Sendable, Hashable {
    /// Where a log subscriber writes.
    public enum Output: Sendable, Hashable {
        /// Standard error (the default).
        case standardError
        /// Standard output.
        case standardOutput
        /// A file, appended to (relative paths are resolved against the config's directory).
        case file(String)
    }

    /// The name (the key in `subscribers`).
    public var name: String
    /// The topics it receives.
    public var topics: [String]
    /// The lowest level logged.
    public var level: LogLevel
    /// The line format.
    public var format: LogFormat
    /// Where lines go.
    public var output: Output

    /// Settings with the config's defaults: every topic, `info`, `text`, standard error.
    public init(name: String, topics: [String] = [">"], level: LogLevel = .info, format: LogFormat = .text,
                output: Output = .standardError) {
        self.name = name
        self.topics = topics
        self.level = level
        self.format = format
        self.output = output
    }
}

/// A `"kind": "file"` subscriber: every matching event archived as a JSON line.
public struct ArchiveSettings: Sendable, Hashable {
    /// The name (the key in `subscribers`).
    public var name: String
    /// The topics it receives.
    public var topics: [String]
    /// The archive (relative paths are resolved against the config's directory).
    public var path: String
    /// When lines are forced to the disk.
    public var durability: FileSinkDurability
    /// The group-commit period under `batch`.
    public var syncEvery: Duration
    /// Size-based rotation, if any.
    public var rotation: FileSinkRotation?

    /// Settings with the config's defaults: every topic, `batch` durability, a sync every 100 ms, no rotation.
    public init(name: String, topics: [String] = [">"], path: String, durability: FileSinkDurability = .batch,
                syncEvery: Duration = .milliseconds(100), rotation: FileSinkRotation? = nil) {
        self.name = name
        self.topics = topics
        self.path = path
        self.durability = durability
        self.syncEvery = syncEvery
        self.rotation = rotation
    }
}

/// The `sandbox` section.
public struct SandboxSettings: Sendable {
    /// The port (0 picks a free one).
    public var port: Int
    /// Faults to inject.
    public var faults: SandboxFaults
    /// How often a new status appears in the sandbox's timeline (its default when nil).
    public var statusInterval: Duration?
    /// How often the sandbox adds a todo to the bucket a todo loader on a sandbox BaaS service
    /// reads (nil, the default: never).
    public var todoInterval: Duration?

    /// Settings with no faults on any free port.
    public init(port: Int = 0, faults: SandboxFaults = .none, statusInterval: Duration? = nil, todoInterval: Duration? = nil) {
        self.port = port
        self.faults = faults
        self.statusInterval = statusInterval
        self.todoInterval = todoInterval
    }
}
