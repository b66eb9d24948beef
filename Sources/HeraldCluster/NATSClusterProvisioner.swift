import HeraldNATS

/// Makes sure the cluster's JetStream resources exist as a node's settings say: the event
/// stream, the post work queue, this node's import consumer, the shared post consumer, the
/// lease and state buckets. A missing one is created (two nodes starting at once create the
/// same configuration, which JetStream accepts); one that exists with other settings is a
/// ``ClusterError`` naming it and each difference, and is never changed, with one exception:
/// the largest message. Each stream and bucket is made with `max_msg_size` at the node's
/// ``ClusterSettings/maxPayload``, so the server refuses what a node could not read (which it
/// would otherwise store and deliver again every ack wait); one found without a limit, or with a
/// larger one (made by an older Herald, or by a node with a larger `maxPayload`), has it lowered
/// to this node's. A smaller limit is kept.
struct NATSClusterProvisioner: Sendable {
    let jetStream: JetStreamContext
    let settings: ClusterSettings

    /// This node's durable consumer of the event stream.
    static func importConsumer(for node: String) -> String { "herald-import-\(node)" }

    var eventStream: StreamConfiguration {
        var config = StreamConfiguration(name: settings.stream, subjects: [ClusterSettings.eventSubjectPrefix + ">"], retention: .limits,
                                         storage: .file, replicas: settings.replicas)
        config.maxAge = settings.maxAge
        config.duplicateWindow = settings.dedupeWindow
        config.maxMessageSize = settings.maxPayload
        return config
    }

    var postStream: StreamConfiguration {
        var config = StreamConfiguration(name: settings.postStream, subjects: [ClusterSettings.postSubjectPrefix + ">"], retention: .workQueue,
                                         storage: .file, replicas: settings.replicas)
        config.duplicateWindow = settings.dedupeWindow
        config.maxMessageSize = settings.maxPayload
        return config
    }

    var importConsumer: ConsumerConfiguration {
        var config = ConsumerConfiguration(durableName: Self.importConsumer(for: settings.node), ackPolicy: .explicit)
        // A node new to the cluster starts with the events published from then on.
        config.deliverPolicy = .new
        config.description = "Herald node \(settings.node): imports the other nodes' events"
        return config
    }

    var postConsumer: ConsumerConfiguration {
        var config = ConsumerConfiguration(durableName: ClusterSettings.postConsumer, ackPolicy: .explicit, ackWait: settings.ackWait)
        config.deliverPolicy = .all
        config.description = "Herald: post intents, shared by every node"
        return config
    }

    func bucket(_ name: String, ttl: Duration?) -> KeyValueConfiguration {
        KeyValueConfiguration(bucket: name, history: 1, ttl: ttl, replicas: settings.replicas, maxValueSize: settings.maxPayload)
    }

    /// Everything, in order; the two buckets.
    func provision() async throws(ClusterError) -> (leases: KeyValueBucket, states: KeyValueBucket) {
        try await ensure(eventStream)
        try await ensure(postStream)
        try await ensureImportConsumer()
        try await ensurePostConsumer()
        let leases = try await ensure(bucket(settings.leaseBucket, ttl: settings.leaseTTL))
        let states = try await ensure(bucket(settings.stateBucket, ttl: nil))
        return (leases, states)
    }

    /// Makes this node's import consumer when it is missing: delivering from its creation on
    /// (a node new to the cluster), or from the message after `sequence` (one made again under
    /// a running node that pulled up to `sequence`).
    func ensureImportConsumer(after sequence: UInt64? = nil) async throws(ClusterError) {
        var wanted = importConsumer
        if let sequence {
            wanted.deliverPolicy = .byStartSequence
            wanted.startSequence = sequence + 1
        }
        try await ensure(wanted, on: eventStream)
    }

    func ensurePostConsumer() async throws(ClusterError) {
        try await ensure(postConsumer, on: postStream)
    }

    func ensure(_ wanted: StreamConfiguration) async throws(ClusterError) {
        let what = "the stream \(wanted.name)"
        if let found = try await info(wanted.name) {
            try Self.check(what, Self.differences(wanted, found))
            try await limitMessageSize(wanted.name, found, what)
            return
        }
        do {
            _ = try await jetStream.createStream(wanted)
        } catch let error as JetStreamError where error.errorCode == JetStreamError.streamNameInUse {
            // Made meanwhile by a node whose limit differs: compared (and limited) as found.
            guard let found = try await info(wanted.name) else { throw Self.creating(what, error) }
            try Self.check(what, Self.differences(wanted, found))
            try await limitMessageSize(wanted.name, found, what)
        } catch {
            throw Self.creating(what, error)
        }
    }

    /// Lowers the largest message of the stream `name` (found as `found`) to this node's
    /// `maxPayload` when it is unlimited or larger.
    private func limitMessageSize(_ name: String, _ found: StreamConfiguration, _ what: String) async throws(ClusterError) {
        if let limit = found.maxMessageSize, limit > 0, limit <= settings.maxPayload { return }
        do {
            _ = try await jetStream.limitMessageSize(stream: name, to: settings.maxPayload)
        } catch {
            throw ClusterError.from(error, "limiting the largest message of \(what) to \(settings.maxPayload) bytes (cluster.maxPayload)")
        }
    }

    func ensure(_ wanted: ConsumerConfiguration, on stream: StreamConfiguration) async throws(ClusterError) {
        let name = wanted.durableName ?? "?"
        let what = "the consumer \(name) of the stream \(stream.name)"
        do {
            let found = try await jetStream.consumerInfo(stream: stream.name, consumer: name)
            try Self.check(what, Self.differences(wanted, found.config))
            return
        } catch let error as JetStreamError where error.errorCode == JetStreamError.consumerNotFound {
        } catch let error as JetStreamError where error.errorCode == JetStreamError.streamNotFound {
            // Deleted under a running node: made again as at start.
            try await ensure(stream)
        } catch {
            throw ClusterError.from(error, "reading \(what)")
        }
        do {
            _ = try await jetStream.createConsumer(stream: stream.name, wanted)
        } catch {
            throw Self.creating(what, error)
        }
    }

    func ensure(_ wanted: KeyValueConfiguration) async throws(ClusterError) -> KeyValueBucket {
        if let bucket = try await existing(wanted) { return bucket }
        do {
            return try await jetStream.createKeyValue(wanted)
        } catch let error as JetStreamError where error.errorCode == JetStreamError.streamNameInUse {
            // Made meanwhile by a node whose limit differs: compared (and limited) as found.
            guard let bucket = try await existing(wanted) else { throw Self.creating(Self.describe(wanted), error) }
            return bucket
        } catch {
            throw Self.creating(Self.describe(wanted), error)
        }
    }

    /// The bucket when it exists as `wanted` says (its largest message lowered to this node's
    /// `maxPayload` when needed); nil when it does not exist.
    private func existing(_ wanted: KeyValueConfiguration) async throws(ClusterError) -> KeyValueBucket? {
        let what = Self.describe(wanted)
        guard let found = try await info("KV_\(wanted.bucket)") else { return nil }
        try Self.check(what, Self.differences(wanted, found))
        try await limitMessageSize("KV_\(wanted.bucket)", found, what)
        do {
            return try await jetStream.keyValue(wanted.bucket)
        } catch {
            throw ClusterError.from(error, "opening \(what)")
        }
    }

    private static func describe(_ bucket: KeyValueConfiguration) -> String {
        "the key-value bucket \(bucket.bucket) (stream KV_\(bucket.bucket))"
    }

    private func info(_ stream: String) async throws(ClusterError) -> StreamConfiguration? {
        do {
            return try await jetStream.streamInfo(stream).config
        } catch let error as JetStreamError where error.errorCode == JetStreamError.streamNotFound {
            return nil
        } catch {
            throw ClusterError.from(error, "reading the stream \(stream)")
        }
    }

    private static func creating(_ what: String, _ error: any Error) -> ClusterError {
        if let error = error as? JetStreamError, error.errorCode == JetStreamError.streamNameInUse || error.errorCode == JetStreamError.consumerNameInUse {
            return .refused("\(what) exists with other settings (\(error.errorDescription)); Herald changes nothing on the server: "
                            + "align the cluster section with it, or remove it")
        }
        return ClusterError.from(error, "creating \(what)")
    }

    private static func check(_ what: String, _ differences: [String]) throws(ClusterError) {
        guard !differences.isEmpty else { return }
        throw .refused("\(what) exists with other settings: \(differences.joined(separator: ", ")); Herald changes nothing on the server: "
                       + "align the cluster section with it, or remove it")
    }
}
