import HeraldNATS

/// The cluster on NATS JetStream (HeraldNATS): the event stream, this node's import consumer,
/// the post work queue and its shared consumer, the lease and state buckets.
///
/// ``connect(_:)`` connects to the first of ``ClusterSettings/servers`` that accepts, then makes
/// sure every resource exists with this node's settings (``NATSClusterProvisioner``): a missing
/// one is created, one that exists with other settings is an error naming it and the
/// difference, and nothing on the server is changed. Errors are ``ClusterError``s:
/// `unavailable` (no server answered, JetStream has no leader yet; worth retrying) or
/// `refused` (the settings differ, JetStream is switched off, the server answered an error).
public final class NATSClusterBackend: ClusterBackend {
    /// The connection.
    public let connection: NATSConnection
    /// The JetStream context on it.
    public let jetStream: JetStreamContext
    /// The settings it was provisioned with.
    public let settings: ClusterSettings
    /// Publishes events and post intents with acknowledgements.
    public let publisher: any ClusterStreamPublisher
    /// This node's durable consumer of the event stream (`herald-import-<node>`).
    public let imports: any ClusterPullConsumer
    /// The shared durable consumer of the post queue (`herald-posters`).
    public let intents: any ClusterPullConsumer
    /// The lease bucket.
    public let leases: any ClusterKeyValue
    /// The state bucket.
    public let states: any ClusterKeyValue
    /// The connection's events as this node's reports, mapped as the one who iterates them
    /// asks (no task of the backend's own runs behind them).
    public let reports: any AsyncSequence<ClusterConnectionChanged, Never> & Sendable

    private init(connection: NATSConnection, jetStream: JetStreamContext, settings: ClusterSettings, provisioner: NATSClusterProvisioner,
                 leases: KeyValueBucket, states: KeyValueBucket) {
        self.connection = connection
        self.jetStream = jetStream
        self.settings = settings
        publisher = NATSStreamPublisher(jetStream: jetStream)
        // Made again (deleted under a running node) after the last event pulled, not from then
        // on: the events stored while it was gone are imported too.
        let position = StreamPosition()
        imports = NATSPullConsumer(jetStream: jetStream, stream: settings.stream, consumer: NATSClusterProvisioner.importConsumer(for: settings.node),
                                   position: position) { () async throws(ClusterError) in
            try await provisioner.ensureImportConsumer(after: position.last)
        }
        intents = NATSPullConsumer(jetStream: jetStream, stream: settings.postStream, consumer: ClusterSettings.postConsumer) { () async throws(ClusterError) in
            try await provisioner.ensurePostConsumer()
        }
        self.leases = NATSClusterKeyValue(bucket: leases)
        self.states = NATSClusterKeyValue(bucket: states)
        reports = Reports(events: connection.events, node: settings.node)
    }

    /// Connects to `settings.servers` and provisions the streams, consumers and buckets.
    ///
    /// - Throws: ``ClusterError``.
    public static func connect(_ settings: ClusterSettings) async throws -> any ClusterBackend {
        try await open(settings)
    }

    /// ``connect(_:)`` with the concrete type (tests read the stream through ``jetStream``).
    public static func open(_ settings: ClusterSettings) async throws -> NATSClusterBackend {
        let options = connectionOptions(for: settings)
        let connection: NATSConnection
        do {
            connection = try NATSConnection(options: options)
            try await connection.connect()
        } catch {
            throw ClusterError.from(error, "connecting to \(settings.servers.map(\.absoluteString).joined(separator: ", "))")
        }
        let jetStream = connection.jetStream(timeout: .seconds(10))
        // Short answers while provisioning: a cluster still electing its leader does not answer
        // at all, and the connection service retries sooner.
        let provisioner = NATSClusterProvisioner(jetStream: connection.jetStream(timeout: .seconds(3)), settings: settings)
        do {
            let (leases, states) = try await provisioner.provision()
            return NATSClusterBackend(connection: connection, jetStream: jetStream, settings: settings, provisioner: provisioner,
                                      leases: leases, states: states)
        } catch {
            // A request that timed out behind a connection that keeps failing (a server that
            // closes after the handshake, say) names that failure, not the request.
            let problem = connection.connectionProblem
            await connection.close()
            if let problem, error.isUnavailable {
                throw ClusterError.unavailable("the connection keeps failing: \(problem); \(error.message)")
            }
            throw error
        }
    }

    /// The client's options for a node: a server that stops answering is found stale (two
    /// pings unanswered, then the check at the third) within the lease's TTL, at most every 20 s.
    static func connectionOptions(for settings: ClusterSettings) -> NATSConnectionOptions {
        var options = NATSConnectionOptions(servers: settings.servers.map(\.absoluteString), name: "herald-\(settings.node)")
        options.maxPayload = settings.maxPayload
        settings.authentication?.apply(to: &options)
        options.tls = settings.tls
        options.maxPingsOutstanding = 2
        options.pingInterval = max(.milliseconds(100), min(.seconds(20), settings.leaseTTL / 5))
        return options
    }

    /// Closes the connection (after flushing what is queued: acks, the last publishes).
    public func close() async {
        await connection.close()
    }

    /// The connection's events mapped to reports as they are pulled.
    private struct Reports: AsyncSequence, Sendable {
        typealias Element = ClusterConnectionChanged
        typealias Failure = Never

        let events: AsyncStream<NATSEvent>
        let node: String

        struct AsyncIterator: AsyncIteratorProtocol {
            var events: AsyncStream<NATSEvent>.Iterator
            let node: String

            mutating func next() async -> ClusterConnectionChanged? {
                await events.next().map { NATSClusterBackend.report($0, node: node) }
            }

            mutating func next(isolation actor: isolated (any Actor)?) async -> ClusterConnectionChanged? {
                await events.next(isolation: actor).map { NATSClusterBackend.report($0, node: node) }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(events: events.makeAsyncIterator(), node: node)
        }
    }

    static func report(_ event: NATSEvent, node: String) -> ClusterConnectionChanged {
        switch event {
        case .connected(let server): ClusterConnectionChanged(node: node, kind: .connected, detail: server)
        case .disconnected(let server, let reason): ClusterConnectionChanged(node: node, kind: .disconnected, detail: "\(server): \(reason)")
        case .reconnected(let server): ClusterConnectionChanged(node: node, kind: .reconnected, detail: server)
        case .connectFailed(let server, let reason): ClusterConnectionChanged(node: node, kind: .unreachable, detail: "\(server): \(reason)")
        case .dropped(let messages, let bytes):
            ClusterConnectionChanged(node: node, kind: .dropped, detail: "\(messages) publishes (\(bytes) bytes) dropped while disconnected: the buffer was full")
        case .slowConsumer(let subject, let dropped):
            ClusterConnectionChanged(node: node, kind: .slow, detail: "\(dropped) messages on \(subject) dropped: the subscription's buffer was full")
        case .serverError(let text): ClusterConnectionChanged(node: node, kind: .error, detail: text)
        case .lameDuck(let server): ClusterConnectionChanged(node: node, kind: .lameduck, detail: server)
        case .discoveredServers(let servers): ClusterConnectionChanged(node: node, kind: .discovered, detail: servers.joined(separator: ", "))
        case .closed(let reason): ClusterConnectionChanged(node: node, kind: .closed, detail: reason)
        }
    }
}
