/// A connected cluster: what the bridge, the leased loaders and the post queue use, made by a
/// ``ClusterConnector`` once the streams, consumers and buckets exist with this node's
/// settings. ``NATSClusterBackend`` is the real one, on HeraldNATS.
public protocol ClusterBackend: Sendable {
    /// Publishes to the event stream (`herald.>`) and the post queue (`herald-posts.>`).
    var publisher: any ClusterStreamPublisher { get }
    /// This node's durable consumer of the event stream.
    var imports: any ClusterPullConsumer { get }
    /// The post queue's consumer every node shares.
    var intents: any ClusterPullConsumer { get }
    /// The lease bucket (keys expire after the lease TTL).
    var leases: any ClusterKeyValue { get }
    /// The state bucket (loader states, post records).
    var states: any ClusterKeyValue { get }
    /// What happens to the connection, as this node's reports; iterated by one task (the
    /// connection service's), which does the work of producing them: no task of the backend's own.
    var reports: any AsyncSequence<ClusterConnectionChanged, Never> & Sendable { get }
    /// Closes the connection.
    func close() async
}

/// Connects to the cluster and makes sure its streams, consumers and buckets exist as
/// `settings` say; throws ``ClusterError`` naming the server's answer, or a stream that exists
/// with other settings.
public typealias ClusterConnector = @Sendable (ClusterSettings) async throws -> any ClusterBackend
