import Herald
import HeraldLifecycle
import HeraldSubscribers
import HeraldSync

/// Publishes this node's events to the cluster's stream, as a service.
///
/// Subscribes to every topic through a bounded mailbox (its publishers wait when it is full)
/// and publishes each batch of events matching the export patterns; a remote event and the
/// bridge's own `cluster.>` reports are never exported. A publish not acknowledged (the
/// connection is down, the stream is electing a leader) is retried with backoff, with the
/// same `Nats-Msg-Id`, so the stream stores it once: reported on `cluster.export.retrying`
/// at the first failure of a batch and every tenth after. An event that cannot be encoded or that the server refuses
/// for good is reported on `cluster.export.skipped`. At shutdown the bus drains this mailbox
/// like any other (within the daemon's drain timeout, whose report counts what was left).
public struct EventExporter<C: Clock>: Service where C.Duration == Duration {
    /// The subscription's mailbox capacity.
    public static var capacity: Int { 4096 }

    private let bus: EventBus
    private let publisher: any ClusterStreamPublisher
    private let codec: ClusterEventCodec
    private let patterns: [TopicPattern]
    private let clock: C
    private let backoff: (initial: Duration, maximum: Duration)

    /// An exporter of `patterns` from `bus` through `publisher`.
    public init(bus: EventBus, publisher: any ClusterStreamPublisher, node: String, patterns: [TopicPattern], clock: C,
                backoff: (initial: Duration, maximum: Duration) = (.milliseconds(100), .seconds(5))) {
        self.bus = bus
        self.publisher = publisher
        self.codec = ClusterEventCodec(node: node)
        self.patterns = patterns
        self.clock = clock
        self.backoff = backoff
    }

    /// Whether an envelope is exported.
    public func exports(_ envelope: Envelope<any Event>) -> Bool {
        guard !(envelope.event is RemoteEvent), envelope.topic.name != "cluster", !envelope.topic.name.hasPrefix("cluster.") else { return false }
        return patterns.contains { $0.matches(envelope.topic) }
    }

    /// Subscribes, then keeps the subscription until shut down.
    public func run() async throws {
        let encoder = EncoderBox()
        let subscription = try bus.subscribeInBatches(matching: ">", name: "cluster.export", capacity: Self.capacity) { batch in
            await export(Array(batch), encoder: encoder)
        }
        announceStarted()
        try? await gracefulShutdown()
        // The bus's drain (stopped before this service) delivered what was queued.
        subscription.cancel()
    }

    private func export(_ envelopes: [Envelope<any Event>], encoder: EncoderBox) async {
        var pending: [(envelope: Envelope<any Event>, message: ClusterMessage)] = []
        for envelope in envelopes where exports(envelope) {
            do {
                pending.append((envelope, try encoder.message(for: envelope, codec: codec)))
            } catch {
                report(envelope, .skipped, "the event cannot be encoded: \(error)", attempts: 0)
            }
        }
        var attempts = 0
        var pause = backoff.initial
        while !pending.isEmpty {
            attempts += 1
            let results = await publisher.publish(pending.map(\.message))
            var failed: [(envelope: Envelope<any Event>, message: ClusterMessage)] = []
            var firstReason: String?
            for (item, result) in zip(pending, results) {
                guard case .failure(let error) = result else { continue }
                if error.isPermanent {
                    report(item.envelope, .skipped, error.message, attempts: attempts)
                } else {
                    failed.append(item)
                    firstReason = firstReason ?? error.message
                }
            }
            // A publisher answering fewer results than messages: the rest are retried.
            if results.count < pending.count { failed += pending[results.count...] }
            pending = failed
            guard let first = pending.first else { return }
            if attempts == 1 || attempts % 10 == 0 {
                report(first.envelope, .retrying, "\(pending.count) event\(pending.count == 1 ? "" : "s") not stored yet: \(firstReason ?? "no answer")",
                       attempts: attempts)
            }
            // Cancelled only when the bus gives up draining; its report counts what is left.
            guard (try? await clock.sleep(for: pause)) != nil else { return }
            pause = min(pause * 2, backoff.maximum)
        }
    }

    private func report(_ envelope: Envelope<any Event>, _ outcome: ClusterExportProblem.Outcome, _ reason: String, attempts: Int) {
        _ = try? bus.post(ClusterExportProblem(eventTopic: envelope.topic.name, eventID: envelope.id.description, outcome: outcome,
                                               reason: reason, attempts: attempts), from: "cluster", correlation: envelope.correlationID)
    }
}

/// The archive's encoder, reused across batches (it caches per event type).
private final class EncoderBox: Sendable {
    private let encoder = SyncLock(EnvelopeLineEncoder())

    func message(for envelope: Envelope<any Event>, codec: ClusterEventCodec) throws -> ClusterMessage {
        try encoder.withLock { try codec.message(for: envelope, encoder: &$0) }
    }
}
