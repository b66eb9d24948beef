import Foundation
import HeraldIO

/// The `cluster` section of `config.json`: the NATS servers, this daemon's node name, what it
/// exports, and the JetStream names and timings the bridge, the leases and the shared post
/// queue use. Without it the daemon runs alone, as before.
///
/// Every daemon of one cluster must use the same stream, buckets, post stream and lease TTL;
/// only ``node`` differs (and ``servers``, when each names its nearest server first).
public struct ClusterSettings: Sendable, Hashable {
    /// What the daemon does when no server answers at start.
    public enum Startup: String, Sendable, Hashable, CaseIterable {
        /// Exit 1 with the servers' errors after ``ClusterSettings/connectWait`` (the default):
        /// a supervisor restarts the daemon, and a misspelt server is seen at once.
        case fail
        /// Keep trying with backoff for as long as it takes; the local bus and the log run
        /// meanwhile, but no loader pulls (none holds a lease) and no post is sent.
        case wait
    }

    /// The default node-independent names and timings.
    public static let defaultStream = "HERALD"
    public static let defaultPostStream = "HERALD_POSTS"
    public static let defaultLeaseBucket = "herald_leases"
    public static let defaultStateBucket = "herald_state"
    /// The default ``maxPayload``: 8 MiB (nats-server's own default `max_payload` is 1 MiB).
    public static let defaultMaxPayload = 8 * 1024 * 1024
    /// The range ``maxPayload`` may take: 1 KiB to 64 MiB (the most nats-server allows).
    public static let maxPayloadRange = 1024...(64 * 1024 * 1024)

    /// The servers, `nats://host:port`, tried in order at start and on every reconnect.
    public var servers: [URL]
    /// This daemon's name: a topic token, unique in the cluster (`a`, `tokyo-1`); events it
    /// exports carry it in `Herald-Node`.
    public var node: String
    /// The local topics published to JetStream (`cluster.>` never is: the bridge's own reports).
    public var export: [String]
    /// The event stream, on subjects `herald.>`.
    public var stream: String
    /// Copies of the event stream, the post queue and both buckets (1…5; at most the servers' count).
    public var replicas: Int
    /// How long a loader's lease lasts unless renewed (renewed every third of it).
    public var leaseTTL: Duration
    /// The window in which JetStream stores a message with an already seen `Nats-Msg-Id` once.
    public var dedupeWindow: Duration
    /// How long the event stream keeps events.
    public var maxAge: Duration
    /// How long a node may hold a post intent without acknowledging it before it is delivered
    /// to another node (a node holding one tells the server it is still working on it).
    public var ackWait: Duration
    /// The work-queue stream of post intents, on subjects `herald-posts.>`.
    public var postStream: String
    /// The key-value bucket of leases (its TTL is ``leaseTTL``).
    public var leaseBucket: String
    /// The key-value bucket of loader states and posts done (no TTL).
    public var stateBucket: String
    /// What happens when no server answers at start.
    public var startup: Startup
    /// How long start-up tries the servers before it gives up (under ``Startup/fail``).
    public var connectWait: Duration
    /// The secret every node signs its post intents with and checks the queue's intents
    /// against (see ``IntentAuthenticator``); the same on every node. Required with post rules.
    public var intentSecret: String?
    /// The only directory a node reads media from when an intent taken from the post queue
    /// names a file; nil: such intents post no media.
    public var mediaDirectory: URL?
    /// The largest message in bytes (headers and body) the node takes from NATS or publishes;
    /// the server's `max_payload` counts when smaller. The streams and buckets are made with it
    /// as their largest message (an existing one with no limit or a larger one has it lowered),
    /// so the server refuses larger ones; a larger one stored before is passed over unread and
    /// reported, the connection stays. Give every node of a cluster the same: the smallest wins.
    public var maxPayload: Int
    /// How the node proves who it is to the NATS servers; nil: it does not.
    public var authentication: ClusterAuthentication?
    /// TLS to every server (`cluster.tls`); nil: TLS only for `tls://` servers and servers that
    /// require it, verified against the system's roots.
    public var tls: TLSConfiguration?

    /// Settings with the documented defaults.
    public init(servers: [URL], node: String, export: [String] = [">"], stream: String = Self.defaultStream, replicas: Int = 1,
                leaseTTL: Duration = .seconds(15), dedupeWindow: Duration = .seconds(120), maxAge: Duration = .seconds(86_400),
                ackWait: Duration = .seconds(30), postStream: String = Self.defaultPostStream,
                leaseBucket: String = Self.defaultLeaseBucket, stateBucket: String = Self.defaultStateBucket,
                startup: Startup = .fail, connectWait: Duration = .seconds(10), maxPayload: Int = Self.defaultMaxPayload) {
        self.servers = servers
        self.node = node
        self.export = export
        self.stream = stream
        self.replicas = replicas
        self.leaseTTL = leaseTTL
        self.dedupeWindow = dedupeWindow
        self.maxAge = maxAge
        self.ackWait = ackWait
        self.postStream = postStream
        self.leaseBucket = leaseBucket
        self.stateBucket = stateBucket
        self.startup = startup
        self.connectWait = connectWait
        self.maxPayload = maxPayload
    }

    /// The node name events from a publisher that is not a Herald node are marked with.
    public static let externalNode = "external"

    /// The subject prefix of exported events: `herald.<topic>`.
    public static let eventSubjectPrefix = "herald."
    /// The subject prefix of post intents: `herald-posts.<rule>`.
    public static let postSubjectPrefix = "herald-posts."
    /// The durable consumer every node pulls post intents from.
    public static let postConsumer = "herald-posters"

    /// Whether `name` can name a stream or a bucket: letters, digits, `-` and `_`, 1 to 32.
    public static func isResourceName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 32 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// Whether `name` can name a node: letters, digits, `-` and `_`, 1 to 64, not ``externalNode``.
    public static func isNodeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name != externalNode
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
