import HeraldNATS

/// The cluster on NATS JetStream (HeraldNATS): the event stream, this node's import consumer,
/// the post work queue and its shared consumer, the lease and state buckets.
///
/// Not finished in this build: HeraldNATS has the core protocol, but its JetStream API
/// (streams, consumers, publish with ack, pull, key-value buckets) has not landed yet, and
/// this backend is written against it. ``connect(_:)`` therefore refuses with that reason, so a
/// `cluster` section fails the start clearly (`herald` exits 1) instead of half-running.
public enum NATSClusterBackend {
    /// Connects to `settings.servers` and provisions the streams, consumers and buckets.
    public static func connect(_ settings: ClusterSettings) async throws -> any ClusterBackend {
        _ = NATSConnectionOptions(servers: settings.servers.map(\.absoluteString), name: "herald-\(settings.node)")
        throw ClusterError.refused("this build has no JetStream client yet (HeraldNATS's JetStream API has not landed), so a cluster section cannot run")
    }
}
