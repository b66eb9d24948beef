import Herald

// The bridge's own reports, on `cluster.>` (never exported: they describe this node).

enum ClusterTopics {
    static func topic(_ tokens: String...) -> Topic {
        (try? Topic(validating: (["cluster"] + tokens).joined(separator: "."))) ?? "cluster.invalid"
    }
}

/// `cluster.lease.<loader>.acquired` / `.lost`: this node took a loader's lease (and runs the
/// loader) or lost it (and stopped the loader before its next save).
public struct ClusterLeaseChanged: Event, Hashable {
    /// The loader.
    public var loader: String
    /// This node.
    public var node: String
    /// What happened to the lease.
    public enum Change: String, Sendable, Hashable, Codable, CustomStringConvertible {
        /// This node took it.
        case acquired
        /// This node lost it.
        case lost

        /// The raw value, as in the topic.
        public var description: String { rawValue }
    }

    /// `acquired` or `lost`.
    public var change: Change
    /// Why it was lost (nil when acquired).
    public var reason: String?

    /// An event.
    public init(loader: String, node: String, change: Change, reason: String? = nil) {
        self.loader = loader
        self.node = node
        self.change = change
        self.reason = reason
    }

    /// `cluster.lease.<loader>.<change>`.
    public var topic: Topic { ClusterTopics.topic("lease", loader, change.rawValue) }
}

/// `cluster.import.malformed`: a message on `herald.>` that is not a Herald event object; it
/// is acknowledged (so it is not delivered again) and reported here instead of imported.
public struct ClusterImportRejected: Event, Hashable {
    /// The message's subject.
    public var subject: String
    /// Its `Herald-Node` header, if any.
    public var node: String?
    /// What is wrong with it.
    public var reason: String
    /// Its body's size.
    public var bytes: Int

    /// An event.
    public init(subject: String, node: String?, reason: String, bytes: Int) {
        self.subject = subject
        self.node = node
        self.reason = reason
        self.bytes = bytes
    }

    /// `cluster.import.malformed`.
    public var topic: Topic { ClusterTopics.topic("import", "malformed") }
}

/// `cluster.export.retrying` (a publish was not acknowledged; it is retried with the same
/// `Nats-Msg-Id`, so it is stored once) and `cluster.export.skipped` (an event that cannot be
/// encoded or is larger than the server takes; it stays in the local archive only).
public struct ClusterExportProblem: Event, Hashable {
    /// The event's topic.
    public var eventTopic: String
    /// The event's id.
    public var eventID: String
    /// What became of the event.
    public enum Outcome: String, Sendable, Hashable, Codable, CustomStringConvertible {
        /// Not acknowledged yet: published again.
        case retrying
        /// Not exported: kept in the local archive only.
        case skipped

        /// The raw value, as in the topic.
        public var description: String { rawValue }
    }

    /// `retrying` or `skipped`.
    public var outcome: Outcome
    /// Why.
    public var reason: String
    /// Attempts so far.
    public var attempts: Int

    /// An event.
    public init(eventTopic: String, eventID: String, outcome: Outcome, reason: String, attempts: Int) {
        self.eventTopic = eventTopic
        self.eventID = eventID
        self.outcome = outcome
        self.reason = reason
        self.attempts = attempts
    }

    /// `cluster.export.<outcome>`.
    public var topic: Topic { ClusterTopics.topic("export", outcome.rawValue) }
}

/// `cluster.connection.<kind>`: what happened to the connection to NATS (`connected`,
/// `disconnected`, `reconnected`, `dropped`, `error`, …), as the client reported it.
public struct ClusterConnectionChanged: Event, Hashable {
    /// What happened to the connection.
    public enum Kind: String, Sendable, Hashable, Codable, CustomStringConvertible {
        /// Connected to a server.
        case connected
        /// The connection to a server was lost.
        case disconnected
        /// Connected again after a loss.
        case reconnected
        /// A server could not be reached.
        case unreachable
        /// Publishes were dropped while disconnected (the buffer was full).
        case dropped
        /// A subscription's buffer was full: messages were dropped.
        case slow
        /// The server reported an error.
        case error
        /// The server is shutting down (lame-duck mode).
        case lameduck
        /// The server told of other servers of the cluster.
        case discovered
        /// The connection was closed for good.
        case closed
        /// No connection yet: the node keeps trying.
        case waiting

        /// Whether the node cannot do its cluster work after it (until it connects again).
        public var isDown: Bool { self == .disconnected || self == .closed || self == .unreachable }
        /// Whether the node is connected after it.
        public var isUp: Bool { self == .connected || self == .reconnected }

        /// The raw value, as in the topic.
        public var description: String { rawValue }
    }

    /// This node.
    public var node: String
    /// What happened.
    public var kind: Kind
    /// The details (the server, the reason, the counts).
    public var detail: String

    /// An event.
    public init(node: String, kind: Kind, detail: String) {
        self.node = node
        self.kind = kind
        self.detail = detail
    }

    /// `cluster.connection.<kind>`.
    public var topic: Topic { ClusterTopics.topic("connection", kind.rawValue) }
}
