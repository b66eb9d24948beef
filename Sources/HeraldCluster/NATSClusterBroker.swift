import HeraldNATS
import HeraldSync

/// Publishes with JetStream acknowledgements: every message of a batch in flight at once (the
/// context's window), then each ack awaited in order.
struct NATSStreamPublisher: ClusterStreamPublisher {
    let jetStream: JetStreamContext

    func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>] {
        var futures: [Result<JetStreamPublishFuture, ClusterError>] = []
        futures.reserveCapacity(messages.count)
        for message in messages {
            let headers = NATSHeaders(message.headers.map { (name: $0.name, value: $0.value) })
            do {
                futures.append(.success(try await jetStream.publishAsync(message.subject, payload: message.payload, headers: headers)))
            } catch {
                futures.append(.failure(ClusterError.from(error, "publishing to \(message.subject)")))
            }
        }
        var results: [Result<ClusterPublishAck, ClusterError>] = []
        results.reserveCapacity(messages.count)
        for (message, future) in zip(messages, futures) {
            switch future {
            case .failure(let error):
                results.append(.failure(error))
            case .success(let future):
                do {
                    let ack = try await future.value
                    results.append(.success(ClusterPublishAck(stream: ack.stream, sequence: ack.sequence, duplicate: ack.duplicate)))
                } catch {
                    results.append(.failure(ClusterError.from(error, "publishing to \(message.subject)")))
                }
            }
        }
        return results
    }
}

/// A durable pull consumer; one that is gone (deleted, or its stream was) is made again
/// before the error is thrown, so the next pull finds it. With a ``position``, the highest
/// stream sequence pulled is kept there, so the consumer made again starts after it.
struct NATSPullConsumer: ClusterPullConsumer {
    let jetStream: JetStreamContext
    let stream: String
    let consumer: String
    var position: StreamPosition?
    let recreate: @Sendable () async throws(ClusterError) -> Void

    init(jetStream: JetStreamContext, stream: String, consumer: String, position: StreamPosition? = nil,
         recreate: @escaping @Sendable () async throws(ClusterError) -> Void) {
        self.jetStream = jetStream
        self.stream = stream
        self.consumer = consumer
        self.position = position
        self.recreate = recreate
    }

    func fetch(batch: Int, wait: Duration) async throws(ClusterError) -> [ClusterDelivery] {
        let messages: [JetStreamMessage]
        do {
            messages = try await jetStream.fetch(stream: stream, consumer: consumer, batch: batch, expires: wait)
        } catch {
            // A pull for a consumer that is gone gets no reply at all from nats-server 2.9 (no
            // 404, no "no responders"): a pull that timed out looks the consumer up too (found, it
            // is left as it is).
            let missing = (error as? JetStreamError).map { $0.errorCode == JetStreamError.consumerNotFound || $0.code == 409 } ?? false
                || (error as? NATSError).map { $0.kind == .noResponders || $0.kind == .timeout } ?? false
            if missing, !Task.isCancelled { try? await recreate() }
            throw ClusterError.from(error, "pulling from the consumer \(consumer) of \(stream)")
        }
        if let position, let last = messages.last?.metadata.streamSequence { position.pulled(last) }
        return messages.map { delivered in
            let message = delivered.message
            let headers = (message.headers?.fields ?? []).map { ClusterMessage.Header($0.name, $0.value) }
            return ClusterDelivery(message: ClusterMessage(subject: message.subject, headers: headers, payload: message.payload,
                                                           headerProblem: message.headerProblem, oversize: message.oversize),
                                   deliveryCount: Int(clamping: delivered.metadata.deliveries)) { (settlement) throws(ClusterError) in
                do {
                    switch settlement {
                    case .ack: try delivered.ack()
                    case .nak: try delivered.nak()
                    case .inProgress: try delivered.inProgress()
                    case .term: try delivered.term()
                    }
                } catch {
                    throw ClusterError.from(error, "settling a message of \(stream)")
                }
            }
        }
    }
}

/// A JetStream key-value bucket as the leases and states use it.
struct NATSClusterKeyValue: ClusterKeyValue {
    let bucket: KeyValueBucket

    var name: String { bucket.bucket }

    func get(_ key: String) async throws(ClusterError) -> ClusterKeyValueEntry? {
        do {
            return try await bucket.get(key).map { ClusterKeyValueEntry(value: $0.value, revision: $0.revision) }
        } catch {
            throw ClusterError.from(error, "reading \(key) of the bucket \(name)")
        }
    }

    func create(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64 {
        do {
            return try await bucket.create(key, value: value)
        } catch let error as KeyValueError where error.kind == .keyExists {
            throw .keyExists(key)
        } catch {
            throw ClusterError.from(error, "creating \(key) in the bucket \(name)")
        }
    }

    func update(_ key: String, value: [UInt8], expectedRevision: UInt64) async throws(ClusterError) -> UInt64 {
        do {
            return try await bucket.update(key, value: value, revision: expectedRevision)
        } catch let error as KeyValueError where error.kind == .wrongRevision {
            throw .wrongRevision(key, expected: expectedRevision)
        } catch {
            throw ClusterError.from(error, "updating \(key) in the bucket \(name)")
        }
    }

    func delete(_ key: String, expectedRevision: UInt64) async throws(ClusterError) {
        do {
            try await bucket.delete(key, revision: expectedRevision)
        } catch let error as KeyValueError where error.kind == .wrongRevision {
            throw .wrongRevision(key, expected: expectedRevision)
        } catch {
            throw ClusterError.from(error, "deleting \(key) in the bucket \(name)")
        }
    }
}

/// The highest stream sequence a consumer handed to this node (its messages are imported
/// whether or not their acks reach the server): a consumer deleted under a running node is
/// made again to start after it, so the events stored meanwhile are imported, and none twice.
final class StreamPosition: Sendable {
    private let highest = SyncLock<UInt64?>(nil)

    /// The highest sequence pulled, if any.
    var last: UInt64? { highest.withLock { $0 } }

    func pulled(_ sequence: UInt64) {
        highest.withLock { $0 = max($0 ?? 0, sequence) }
    }
}
