import Foundation
import Herald
import HeraldLifecycle
import HeraldServices
import HeraldSubscribers
import HeraldSync

/// Sends the cluster's post intents, as a service: every node runs one, and all pull from the
/// one durable consumer of the post queue, so each intent is handed to one node at a time.
///
/// For each intent it first looks for the key's record in the state bucket (`post.<sha1 of
/// the key>`): a post already made is acknowledged and reported as a duplicate sent. Otherwise
/// it sends the post as the ``PostScheduler`` does (quiet hours and the rule's rate as this
/// node counts them, retries, rate-limit resets), telling the server it is still working every
/// third of the ack wait. Just before its first request it creates the key's attempt mark
/// (`attempt.<sha1 of the key>`); `mayExist` is true from the second delivery on and whenever
/// that mark was there already, so a node that takes over an intent from a node killed (or cut
/// off) mid-post relies on the service's duplicate detection (or the BaaS key lookup), however
/// the intent came to it. After the service answered: the record is written, the intent is
/// acknowledged, `post.<rule>.sent` / `.failed` is published. A node stopping mid-post gives
/// the intent back (nak) for another node; a node killed mid-post stops telling the server,
/// which delivers the intent again after the ack wait.
///
/// An intent is taken only when it is signed with the cluster's intent secret (see
/// ``IntentAuthenticator``): an unsigned, altered or forged message is terminated and reported
/// as `cluster.post.refused`; one signed under another secret is reported and left for the ack
/// wait, so a node that has that secret can take it. Neither is ever posted here.
public final class ClusterPostWorker<C: Clock>: Service, Sendable where C.Duration == Duration {
    private let name: String
    private let rules: [String: PostRule]
    private let services: [String: any PostService]
    private let consumer: any ClusterPullConsumer
    private let records: any ClusterKeyValue
    private let bus: EventBus
    private let clock: C
    private let now: @Sendable () -> Date
    private let retry: PostScheduler.RetryPolicy
    private let ackWait: Duration
    private let node: String
    private let authenticator: IntentAuthenticator
    private let sends = SyncLock<[String: [Date]]>([:])

    /// A worker for the rules of every post subscriber (by rule name) and their services.
    public init(name: String, rules: [PostRule], services: [String: any PostService], consumer: any ClusterPullConsumer,
                records: any ClusterKeyValue, bus: EventBus, node: String, authenticator: IntentAuthenticator,
                retry: PostScheduler.RetryPolicy, ackWait: Duration, clock: C, now: @escaping @Sendable () -> Date = { Date() }) {
        self.name = name
        self.authenticator = authenticator
        self.rules = Dictionary(rules.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.services = services
        self.consumer = consumer
        self.records = records
        self.bus = bus
        self.node = node
        self.retry = retry
        self.ackWait = ackWait
        self.clock = clock
        self.now = now
    }

    /// The state bucket's key recording `key`'s post (keys allow only a few characters).
    public static func recordKey(_ key: String) -> String {
        "post." + SHA1.hash(Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The state bucket's key marking that a node began sending `key`'s post (see the worker's
    /// documentation).
    public static func attemptKey(_ key: String) -> String {
        "attempt." + SHA1.hash(Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Pulls and sends until shut down.
    public func run() async throws {
        announceStarted()
        _ = try? await cancelWhenGracefulShutdown {
            try await waitUntilGroupStarted()
            await self.loop()
        }
    }

    private func loop() async {
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                for delivery in try await consumer.fetch(batch: 1, wait: .seconds(1)) {
                    await handle(delivery)
                }
                pause = .milliseconds(100)
            } catch {
                if error.isCancelled || Task.isCancelled { return }
                guard (try? await clock.sleep(for: pause)) != nil else { return }
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    private func handle(_ delivery: ClusterDelivery) async {
        let message = delivery.message
        if let size = message.oversize {
            // Nothing of it was read, not even its signature: refused once, never delivered again.
            try? await delivery.settle(.term)
            post(ClusterPostRefused(subject: message.subject, key: nil, claimedNode: nil, reason: ClusterMessage.oversizeReason(size), bytes: size), nil)
            return
        }
        let reason: String
        switch authenticator.verdict(message) {
        case .authentic:
            reason = ""
        case .unsigned:
            reason = "not signed (no \(IntentAuthenticator.header) header): only a node with the cluster's intent secret may queue posts"
        case .forged:
            reason = "the signature does not match this node's key: the message was altered or forged"
        case .otherSecret(let keyID):
            // A node configured with another secret signed it: left unsettled, so it is delivered
            // again after the ack wait, to a node that may have that secret; never posted here.
            post(ClusterPostRefused(subject: message.subject, key: message.header(ClusterEventCodec.messageIDHeader),
                                    claimedNode: message.header(ClusterEventCodec.nodeHeader),
                                    reason: "signed with another intent secret (key \(keyID); this node's is \(authenticator.keyID)): left for a node that has it; give every node the same cluster.intentSecret",
                                    bytes: message.payload.count), nil)
            return
        }
        guard reason.isEmpty else {
            try? await delivery.settle(.term)
            post(ClusterPostRefused(subject: message.subject, key: message.header(ClusterEventCodec.messageIDHeader),
                                    claimedNode: message.header(ClusterEventCodec.nodeHeader), reason: reason, bytes: message.payload.count), nil)
            return
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let intent = try? decoder.decode(PostIntent.self, from: Data(delivery.message.payload)) else {
            let rule = String(delivery.message.subject.dropFirst(ClusterSettings.postSubjectPrefix.count))
            post(PostFailed(rule: rule, key: delivery.message.header(ClusterEventCodec.messageIDHeader), service: "-",
                            reason: "the post queue's message on \(delivery.message.subject) is not a post intent", correlation: nil, attempts: 0), nil)
            try? await delivery.settle(.term)
            return
        }
        let correlation = intent.correlation.flatMap(EventID.init)
        let recordKey = Self.recordKey(intent.key)
        if let record = try? await records.get(recordKey) {
            // Any record means a node posted (or gave up on) the key: acknowledged either way.
            let done = PostRecord(decoding: record.value)
            try? await delivery.settle(.ack)
            if let done, done.result == .sent {
                post(PostSent(rule: intent.rule, key: intent.key, service: intent.service, id: done.id, duplicate: true,
                              correlation: intent.correlation, attempts: 0), correlation)
            }
            return
        }
        guard let rule = rules[intent.rule], let service = services[intent.service] else {
            try? await delivery.settle(.term)
            post(PostFailed(rule: intent.rule, key: intent.key, service: intent.service,
                            reason: "node \(node) has no rule \(intent.rule) posting through \(intent.service); every node needs the same post rules",
                            correlation: intent.correlation, attempts: 0), correlation)
            return
        }
        let attempts = PostAttempts(retry: retry, clock: clock, now: now)
        // The heartbeat is a child task, cancelled and awaited once the attempts ended.
        let outcome = await withTaskGroup(of: Void.self) { [clock, ackWait] group in
            group.addTask {
                while (try? await clock.sleep(for: ackWait / 3)) != nil {
                    try? await delivery.settle(.inProgress)
                }
            }
            let outcome = await attempts.send(intent, through: service, mayExist: delivery.deliveryCount > 1,
                                              waitBeforeSending: { waitBeforeSending(rule) },
                                              beforeFirstRequest: { await self.markAttempt(intent) }, progress: { _ in })
            group.cancelAll()
            return outcome
        }
        switch outcome {
        case .sent(let id, let duplicate, let requests):
            await record(intent, recordKey, result: .sent, id: id)
            try? await delivery.settle(.ack)
            let date = now()
            if let rate = rule.rate {
                sends.withLock { sends in
                    sends[rule.name, default: []].removeAll { date.timeIntervalSince($0) >= rate.period.timeInterval }
                    sends[rule.name, default: []].append(date)
                }
            }
            post(PostSent(rule: intent.rule, key: intent.key, service: intent.service, id: id, duplicate: duplicate,
                          correlation: intent.correlation, attempts: requests), correlation)
        case .failed(let reason, let status, let requests):
            // This node may have been paused (or cut off) past the ack wait while it held the
            // intent: the server gave it to another node, which posted and recorded it, and this
            // node's late attempt met that post (a duplicate refused). The record says it was
            // sent: a duplicate, not a failure, and the record stays.
            if let done = await sentRecord(recordKey) {
                try? await delivery.settle(.ack)
                post(PostSent(rule: intent.rule, key: intent.key, service: intent.service, id: done.id, duplicate: true,
                              correlation: intent.correlation, attempts: requests), correlation)
                return
            }
            await record(intent, recordKey, result: .failed, id: nil)
            try? await delivery.settle(.ack)
            post(PostFailed(rule: intent.rule, key: intent.key, service: intent.service, reason: reason, status: status,
                            correlation: intent.correlation, attempts: requests), correlation)
        case .stopped:
            // Not in the cancelled task: the nak must still be sent, so another node takes it now.
            // An unstructured task is the one way to shield it from this task's cancellation; it
            // is awaited here, so it does not outlive run(), and it cannot fail (`try?`).
            await Task { try? await delivery.settle(.nak) }.value
        }
    }

    /// Marks that a node is about to send `intent` (`attempt.<sha1 of the key>`, created once,
    /// never overwritten) before its first request: true when the mark was there already, so a
    /// node (this one on an earlier delivery, or another) may have made the post, and the
    /// service's duplicate refusal then means it was sent. The delivery count alone cannot say
    /// so: a post consumer made again starts its counts over, and an intent stored again (a
    /// post stream that lost its dedupe window with a leader) is a new message, while the
    /// sender's `post.` record is written after the post, best effort, and may be missing.
    ///
    /// The post waits for the mark: while the bucket cannot be written the request is not sent
    /// (the heartbeat keeps the intent here), so every post ever made has its mark. Nil when
    /// stopping meanwhile.
    private func markAttempt(_ intent: PostIntent) async -> Bool? {
        let key = Self.attemptKey(intent.key)
        let value = PostAttemptMark(key: intent.key, node: node).encoded
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                _ = try await records.create(key, value: value)
                return false
            } catch where error.isKeyExists {
                return true
            } catch {
                guard (try? await clock.sleep(for: pause)) != nil else { return nil }
                pause = min(pause * 2, .seconds(5))
            }
        }
        return nil
    }

    /// The key's record when it says the post was sent (by any node), with the post's id.
    private func sentRecord(_ key: String) async -> (id: String?, node: String?)? {
        guard let record = try? await records.get(key), let done = PostRecord(decoding: record.value), done.result == .sent else { return nil }
        return (done.id, done.node)
    }

    /// Writes the key's record (best effort: the ack follows either way; the dedupe window and
    /// the service's duplicate detection still stand behind it).
    private func record(_ intent: PostIntent, _ key: String, result: PostRecord.Result, id: String?) async {
        guard let value = PostRecord(key: intent.key, result: result, node: node, id: id).encoded else { return }
        _ = try? await records.put(key, value: value)
    }

    private func waitBeforeSending(_ rule: PostRule) -> Duration? {
        let now = now()
        if let end = rule.quiet?.end(after: now) { return PostScheduler.duration(from: now, to: end) }
        if let rate = rule.rate, let slot = rate.nextSlot(after: sends.withLock { $0[rule.name] ?? [] }, now: now) {
            return max(PostScheduler.duration(from: now, to: slot), .milliseconds(1))
        }
        return nil
    }

    private func post<E: Event>(_ event: E, _ correlation: EventID?) {
        _ = try? bus.post(event, from: Sender(name), correlation: correlation)
    }
}

/// The mark a node writes before it first sends a post (`attempt.<sha1 of the key>`):
/// `{"key":"…","node":"a"}`. A key of its own, beside the `post.` record, so a node of an
/// earlier version, which takes any `post.` record for a finished post, never mistakes it.
struct PostAttemptMark: Codable, Hashable, Sendable {
    /// The post's key.
    var key: String
    /// The node that began sending it.
    var node: String

    /// The mark's bytes, keys sorted (what counts is that the key exists: were two strings ever
    /// not encodable, an empty value would still be the mark).
    var encoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map(Array.init) ?? []
    }
}

/// A post's record in the state bucket (`post.<sha1 of the key>`), written by the node that
/// posted it: `{"id":"…","key":"…","node":"a","result":"sent"}`, keys sorted and `id` left out
/// when the service gave none (the bytes every Herald version wrote, so a node of any version
/// reads it).
struct PostRecord: Codable, Hashable, Sendable {
    /// How the post ended.
    enum Result: String, Codable, Sendable {
        /// The service took it.
        case sent
        /// It failed for good.
        case failed
    }

    /// The post's key.
    var key: String
    /// How it ended.
    var result: Result
    /// The node that wrote the record.
    var node: String
    /// The post's id at the service, when it gave one.
    var id: String?

    /// A record.
    init(key: String, result: Result, node: String, id: String?) {
        self.key = key
        self.result = result
        self.node = node
        self.id = id
    }

    /// The record in `bytes`; nil when they are not a record this node can read.
    init?(decoding bytes: [UInt8]) {
        guard let record = try? JSONDecoder().decode(Self.self, from: Data(bytes)) else { return nil }
        self = record
    }

    /// The record's bytes (nil only if a string cannot be encoded).
    var encoded: [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map(Array.init)
    }
}
