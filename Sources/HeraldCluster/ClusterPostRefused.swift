import Herald

/// `cluster.post.refused`: a message on the post queue that this node will not post, because it
/// is not signed with the cluster's intent secret (see ``IntentAuthenticator``): someone who can
/// publish on the cluster's NATS account but is not a Herald node of this cluster put it there,
/// or a node runs with another secret. It is terminated (never delivered again) and not posted.
public struct ClusterPostRefused: Event, Hashable {
    /// The message's subject (`herald-posts.<rule>`).
    public var subject: String
    /// Its `Nats-Msg-Id` (the idempotency key it claims), if any.
    public var key: String?
    /// The node its `Herald-Node` header claims (not to be trusted: the message is not authentic).
    public var claimedNode: String?
    /// Why it was refused.
    public var reason: String
    /// Its body's size.
    public var bytes: Int

    /// An event.
    public init(subject: String, key: String?, claimedNode: String?, reason: String, bytes: Int) {
        self.subject = subject
        self.key = key
        self.claimedNode = claimedNode
        self.reason = reason
        self.bytes = bytes
    }

    /// `cluster.post.refused`.
    public var topic: Topic { ClusterTopics.topic("post", "refused") }
}
