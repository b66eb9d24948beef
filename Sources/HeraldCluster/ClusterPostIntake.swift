import Foundation
import Herald
import HeraldLifecycle
import HeraldSubscribers
import HeraldSync

/// A post subscriber's intake in a cluster, as a service: each rule subscribes inline, as the
/// ``PostScheduler``'s do, and every intent goes to the cluster's post queue (subject
/// `herald-posts.<rule>`, `Nats-Msg-Id` = the idempotency key, so an item announced again
/// within the dedupe window is stored once) instead of a local outbox.
///
/// Only this node's own events make intents: the node that announced an item is the one whose
/// rules post it, and a ``RemoteEvent`` (another node's announcement) makes none. Publishes run
/// on a child task of ``run()``, never in the announcement's publish; the ``IntentLedger`` makes the
/// announcing loader's state save wait for them. An intent the queue does not take is retried
/// with backoff for as long as the service runs, reported as `post.<rule>.held` at the first
/// failure and `post.<rule>.recorded` once stored; meanwhile the ledger refuses state saves,
/// so an intent lost with a stopping node is announced again by the loader's next holder. One
/// the queue can never take (larger than its largest message) ends as `post.<rule>.failed`.
public final class ClusterPostIntake<C: Clock>: Service, Sendable where C.Duration == Duration {
    private struct Queued: Sendable {
        var ticket: UInt64
        var intent: PostIntent
    }

    /// The subscriber's name (its events' sender).
    public let name: String
    private let rules: [PostRule]
    private let bus: EventBus
    private let publisher: any ClusterStreamPublisher
    private let ledger: IntentLedger
    private let node: String
    private let clock: C
    private let now: @Sendable () -> Date
    private let retry: PostScheduler.RetryPolicy
    private let queueName: String
    private let authenticator: IntentAuthenticator
    private let stopping = SyncLock(false)

    /// An intake of `rules` publishing to the queue `queueName` (for reports) through `publisher`,
    /// each intent signed by `authenticator`.
    public init(name: String, rules: [PostRule], bus: EventBus, publisher: any ClusterStreamPublisher, queueName: String,
                ledger: IntentLedger, node: String, authenticator: IntentAuthenticator, retry: PostScheduler.RetryPolicy, clock: C,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.authenticator = authenticator
        self.name = name
        self.rules = rules
        self.bus = bus
        self.publisher = publisher
        self.queueName = queueName
        self.ledger = ledger
        self.node = node
        self.retry = retry
        self.clock = clock
        self.now = now
    }

    /// The message carrying `intent`, signed by `authenticator`.
    public static func message(for intent: PostIntent, node: String, signedBy authenticator: IntentAuthenticator) throws -> ClusterMessage {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return authenticator.signed(ClusterMessage(subject: ClusterSettings.postSubjectPrefix + intent.rule,
                                                   headers: [.init(ClusterEventCodec.messageIDHeader, intent.key), .init(ClusterEventCodec.nodeHeader, node)],
                                                   payload: Array(try encoder.encode(intent))))
    }

    /// Subscribes the rules and publishes their intents until shut down.
    public func run() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Queued.self)
        // The publishes run in a child task: run() returns only after it ended.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await queued in stream { await publish(queued) }
            }
            var subscriptions: [Subscription] = []
            do {
                for rule in rules {
                    subscriptions.append(try bus.subscribe(matching: rule.pattern, name: "\(name).\(rule.name)", delivery: .inline) { [self] envelope in
                        try accept(envelope, rule: rule, into: continuation)
                    })
                }
            } catch {
                subscriptions.forEach { $0.cancel() }
                continuation.finish()
                group.cancelAll()
                throw error
            }
            announceStarted()
            try? await gracefulShutdown()
            subscriptions.forEach { $0.cancel() }
            // What is queued is tried once more; one the queue refuses now is left to the loader's
            // next holder, whose state was not saved past it.
            stopping.withLock { $0 = true }
            continuation.finish()
            try await group.waitForAll()
        }
    }

    private func accept(_ envelope: Envelope<any Event>, rule: PostRule, into queue: AsyncStream<Queued>.Continuation) throws {
        guard !(envelope.event is RemoteEvent) else { return }
        for outcome in try PostIntake.outcomes(for: envelope, rule: rule, now: now()) {
            switch outcome {
            case .failed(let failure):
                _ = try? bus.post(failure, from: Sender(name), correlation: envelope.correlationID)
            case .intent(let intent):
                queue.yield(Queued(ticket: ledger.begin(), intent: intent))
            }
        }
    }

    private func publish(_ queued: Queued) async {
        let intent = queued.intent
        let correlation = intent.correlation.flatMap(EventID.init)
        let message: ClusterMessage
        do {
            message = try Self.message(for: intent, node: node, signedBy: authenticator)
        } catch {
            ledger.stored(queued.ticket)
            _ = try? bus.post(PostFailed(rule: intent.rule, key: intent.key, service: intent.service, reason: "the intent cannot be encoded: \(error)",
                                         correlation: intent.correlation, attempts: 0), from: Sender(name), correlation: correlation)
            return
        }
        var refusals = 0
        var pause = retry.initial
        while true {
            let result = await publisher.publish([message]).first ?? .failure(.unavailable("no answer"))
            switch result {
            case .success:
                ledger.stored(queued.ticket)
                if refusals > 0 {
                    _ = try? bus.post(PostRecorded(rule: intent.rule, key: intent.key, path: "stream \(queueName)", refusals: refusals,
                                                   correlation: intent.correlation), from: Sender(name), correlation: correlation)
                }
                return
            case .failure(let error) where error.isPermanent:
                // Retrying cannot help (larger than the queue takes, a subject it refuses): the
                // post ends failed, as an intent that cannot be encoded does, and the loader's
                // saves do not wait for it.
                ledger.stored(queued.ticket)
                _ = try? bus.post(PostFailed(rule: intent.rule, key: intent.key, service: intent.service,
                                             reason: "the post queue (stream \(queueName)) cannot take the intent: \(error.message)",
                                             correlation: intent.correlation, attempts: 0), from: Sender(name), correlation: correlation)
                return
            case .failure(let error):
                refusals += 1
                if refusals == 1 {
                    ledger.held(queued.ticket)
                    _ = try? bus.post(PostHeld(rule: intent.rule, key: intent.key, service: intent.service, path: "stream \(queueName)",
                                               reason: error.message, correlation: intent.correlation), from: Sender(name), correlation: correlation)
                }
                // Cancelled (run() was, not shut down gracefully): the pause would not wait.
                if stopping.withLock({ $0 }) || Task.isCancelled { return }
                try? await clock.sleep(for: pause)
                pause = min(pause * 2, retry.maximum)
            }
        }
    }
}
