import Herald
import HeraldLifecycle

/// Brings other nodes' events onto this node's bus, as a service: pulls this node's durable
/// consumer of `herald.>` and publishes each event as a ``RemoteEvent`` from its original
/// sender, in its original correlation chain.
///
/// A message this node published is acknowledged and skipped (never imported twice, nothing
/// loops); one that is not a Herald event object is reported on `cluster.import.malformed` and
/// terminated (not delivered again). A message is acknowledged only after the bus took the
/// event, so one pulled by a node that dies is delivered again. While the consumer cannot be
/// reached, pulls are retried with backoff (the connection's own events say why).
public struct EventImporter<C: Clock>: Service where C.Duration == Duration {
    private let bus: EventBus
    private let consumer: any ClusterPullConsumer
    private let codec: ClusterEventCodec
    private let clock: C
    private let wait: Duration

    /// An importer for `node` pulling from `consumer`, each pull waiting up to `wait`.
    public init(bus: EventBus, consumer: any ClusterPullConsumer, node: String, clock: C, wait: Duration = .seconds(1)) {
        self.bus = bus
        self.consumer = consumer
        self.codec = ClusterEventCodec(node: node)
        self.clock = clock
        self.wait = wait
    }

    /// Pulls and imports until shut down.
    public func run() async throws {
        announceStarted()
        _ = try? await cancelWhenGracefulShutdown { await self.loop() }
    }

    private func loop() async {
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            let deliveries: [ClusterDelivery]
            do {
                deliveries = try await consumer.fetch(batch: 256, wait: wait)
                pause = .milliseconds(100)
            } catch {
                if error.isCancelled || Task.isCancelled { return }
                guard (try? await clock.sleep(for: pause)) != nil else { return }
                pause = min(pause * 2, .seconds(5))
                continue
            }
            for delivery in deliveries {
                guard await importOne(delivery) else { return }
            }
        }
    }

    /// Imports one delivery; false when the bus refused it (it is shutting down: not acknowledged, so delivered again).
    private func importOne(_ delivery: ClusterDelivery) async -> Bool {
        switch codec.decode(delivery.message) {
        case .own:
            try? await delivery.settle(.ack)
        case .event(let event, let sender, let correlation):
            guard (try? await bus.publish(event, from: sender, correlation: correlation)) != nil else {
                try? await delivery.settle(.nak)
                return false
            }
            try? await delivery.settle(.ack)
        case .malformed(let reason):
            let message = delivery.message
            _ = try? await bus.publish(ClusterImportRejected(subject: message.subject, node: message.header(ClusterEventCodec.nodeHeader),
                                                             reason: reason, bytes: message.oversize ?? message.payload.count), from: "cluster")
            try? await delivery.settle(.term)
        }
        return true
    }
}
