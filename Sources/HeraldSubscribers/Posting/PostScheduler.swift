import Foundation
import Herald
import HeraldServices
import Synchronization
import HeraldIO
import HeraldLifecycle
import HeraldSync

/// Turns events into posts, each exactly once, across crashes.
///
/// For every event matching a rule (and its conditions) the scheduler renders the post, gives
/// it an idempotency key (the rule and the new item's id, or the rule and the event's id) and,
/// before the event's publish returns, queues the intent's append (fsync'd) to the outbox
/// journal on the `io` thread it is given: the publisher never waits for the disk. The rules
/// subscribe inline, and the daemon gives its loaders' `LoaderStateStore` the same
/// first-in-first-out thread, where a loader saves its state after publishing, so its state is
/// never on the disk before the intents of its items (see Documentation/Daemon.md, "Posting").
/// Then one worker per rule, once each intent is in the journal, sends the intents in order:
///
/// - quiet hours and the rule's rate make a post wait, never drop;
/// - a rate-limit answer waits for the service's reset time;
/// - 5xx, a network error, or an answer that cannot be read is retried with exponential
///   backoff, up to ``RetryPolicy/attempts`` requests;
/// - Twitter's "duplicate status" (code 187) counts as sent;
/// - other 4xx answers (401, 403, 400), a media file that breaks the limits or cannot be read
///   give up at once;
///
/// and the outcome is written to the journal and published as `post.<rule>.sent` or
/// `post.<rule>.failed`; media uploads publish `upload.<rule>.progress`. When ``run(on:)``
/// starts, intents left unfinished by a previous run are sent again (the service's duplicate
/// detection, or the BaaS key lookup, keeps that from posting twice), and keys already done are
/// never posted again.
///
/// Its lifecycle is one ``run(on:)`` (a service of a `ServiceGroup` through
/// ``service(on:)``), decided by a state machine: a scheduler runs once, and a second run is
/// refused with ``PostSchedulerError``.
///
/// Library code: it never prints. A post is never sent before its intent is in the journal: an
/// intent the journal refuses (a full disk) is published as `post.<rule>.held` and kept in
/// memory, and the rule's worker retries the journal with backoff (``RetryPolicy/initial``
/// doubling to ``RetryPolicy/maximum``, on the clock, without end) before it sends that post or
/// any later one of the rule; `post.<rule>.recorded` says when the journal took it. A done
/// record the journal refuses leaves the intent pending, to be sent again at the next start,
/// where the duplicate detection absorbs it.
public final class PostScheduler: Sendable {
    /// Retries of a post that failed for a reason that may pass.
    public struct RetryPolicy: Sendable, Hashable {
        /// The first wait.
        public var initial: Duration
        /// The longest wait.
        public var maximum: Duration
        /// Requests before giving up (at least 1).
        public var attempts: Int

        public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(300), attempts: Int = 10) {
            self.initial = initial
            self.maximum = max(initial, maximum)
            self.attempts = max(1, attempts)
        }
    }

    /// Where a test may make the process stop, to check that nothing is lost or doubled.
    public enum FaultPoint: String, Sendable, Hashable, CaseIterable {
        /// An intent is in the journal; its post has not been sent.
        case afterIntentRecorded = "after-intent"
        /// The post was accepted by the service; the journal does not say so yet.
        case afterPostSent = "after-post"
    }

    /// Its name (subscriptions are named `<name>.<rule>`; its events' sender is `<name>`).
    public let name: String
    /// The rules.
    public let rules: [PostRule]
    private let services: [String: any PostService]
    private let outbox: PostOutbox
    private let retry: RetryPolicy
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let faultHook: (@Sendable (FaultPoint) -> Void)?
    let state = SyncLock(State())

    typealias Machine = PostSchedulerMachine<EventBus, AsyncStream<Queued>.Continuation, Subscription>

    struct State {
        /// The lifecycle: which bus, queues and subscriptions exist, and whether it may run.
        var machine = Machine()
        var known: Set<String> = []
        var sends: [String: [Date]] = [:]
        var pending = 0
        /// The posts counted in `pending`, by key, for ``snapshot``.
        var waiting: [String: Snapshot.Waiting] = [:]
        /// Outcomes since start, by rule.
        var sent: [String: Int] = [:]
        var failed: [String: Int] = [:]
        /// Intents the outbox refused, held on ``PostOutbox/io`` until written.
        var held = 0
        /// Who waits for nothing to wait (``waitUntilIdle()``), by id.
        var idleWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextIdleWaiter: UInt64 = 0
    }

    struct Queued: Sendable {
        var intent: PostIntent
        var mayExist: Bool
        /// The intent's append, queued on the outbox's I/O thread at intake (nil: the intent was
        /// read from the journal): true once it is on the disk, false when the journal refused
        /// it, and the worker writes it before sending.
        var journal: BlockingIOThread.Pending<Bool>? = nil
    }

    /// Creates a scheduler; nothing is read or sent until ``run(on:)``.
    ///
    /// - Parameters:
    ///   - services: the services the rules name, by name.
    ///   - outboxPath: the journal (in the state directory).
    ///   - io: the thread the journal is read and appended on. Give it the thread the loaders'
    ///     `LoaderStateStore` writes on (the daemon makes one, `herald.state-io`, for both):
    ///     exactly-once posting rests on that sharing, since a loader's state queued after an
    ///     announcement is then written after the intents it queued, and is refused while the
    ///     journal holds one it could not write (``BlockingIOThread/holds``).
    ///   - clock: what waits (backoff, rate, quiet hours, rate-limit resets) sleep on.
    ///   - now: the wall-clock time, for quiet hours, rates and rate-limit reset dates.
    ///   - faultHook: called at each ``FaultPoint`` (tests stop the process there).
    public convenience init(name: String, rules: [PostRule], services: [String: any PostService], outboxPath: String,
                            io: BlockingIOThread, retry: RetryPolicy = RetryPolicy(), clock: any Clock<Duration> = ContinuousClock(),
                            now: @escaping @Sendable () -> Date = { Date() }, faultHook: (@Sendable (FaultPoint) -> Void)? = nil) {
        self.init(name: name, rules: rules, services: services, outbox: PostOutbox(path: outboxPath, io: io), retry: retry, clock: clock,
                  now: now, faultHook: faultHook)
    }

    /// Creates a scheduler on `outbox` (tests give it one whose writes fail).
    init(name: String, rules: [PostRule], services: [String: any PostService], outbox: PostOutbox, retry: RetryPolicy,
         clock: any Clock<Duration>, now: @escaping @Sendable () -> Date, faultHook: (@Sendable (FaultPoint) -> Void)?) {
        self.name = name
        self.rules = rules
        self.services = services
        self.outbox = outbox
        self.retry = retry
        self.clock = clock
        self.now = now
        self.faultHook = faultHook
    }

    /// Posts waiting to be sent or being sent.
    public var pendingCount: Int { state.withLock { $0.pending } }

    /// The thread its journal is read and written on (shared with the loaders' state store).
    public var io: BlockingIOThread { outbox.io }

    /// Runs the scheduler on `bus` until it is asked to stop: reads and compacts the outbox on
    /// its I/O thread (queueing what a previous run left unfinished), starts one worker per
    /// rule, subscribes every rule, announces that it started, then waits for a graceful
    /// shutdown or cancellation. Stopping ends the subscriptions and the workers (a post in
    /// flight is cancelled and stays in the journal, to be sent at the next start) and closes the
    /// journal after the appends queued before it.
    ///
    /// The workers are child tasks of this call: nothing of the scheduler outlives it.
    ///
    /// - Throws: ``PostSchedulerError`` when the scheduler runs or ran already, ``PostOutboxError``
    ///   when the journal cannot be read or written, ``EventBusError`` when the bus refuses a
    ///   subscription.
    public func run(on bus: EventBus) async throws {
        switch state.withLock({ $0.machine.run() }) {
        case .start: break
        case .refuse(let reason): throw PostSchedulerError(scheduler: name, reason: reason)
        }
        let recovery: PostOutbox.Recovery
        do {
            recovery = try await outbox.io.run { [outbox] () throws(PostOutboxError) in try outbox.recover() }
        } catch {
            state.withLock { $0.machine.finished() }
            throw error
        }
        var streams: [(rule: PostRule, stream: AsyncStream<Queued>)] = []
        var queues: [String: AsyncStream<Queued>.Continuation] = [:]
        for rule in rules {
            let (stream, continuation) = AsyncStream.makeStream(of: Queued.self)
            streams.append((rule, stream))
            queues[rule.name] = continuation
        }
        state.withLock { state in
            state.known = recovery.known
            state.sends = recovery.sends
            state.machine.started(bus: bus, queues: queues)
        }
        if recovery.setAside > 0 {
            _ = try? bus.post(FileSinkTornLine(sink: "\(name).outbox", path: outbox.path, byteCount: recovery.setAsideBytes,
                                               movedTo: outbox.path + ".torn", keptBytes: recovery.keptBytes), from: Sender(name))
        }
        for intent in recovery.pending {
            enqueue(Queued(intent: intent, mayExist: true), rule: intent.rule, bus: bus)
        }
        let failure: (any Error)? = await withTaskGroup(of: Void.self) { workers in
            for (rule, stream) in streams {
                workers.addTask { [self] in
                    for await queued in stream { await deliver(queued, rule: rule) }
                }
            }
            var failure: (any Error)?
            var subscriptions: [Subscription] = []
            do {
                for rule in rules {
                    subscriptions.append(try bus.subscribe(matching: rule.pattern, name: "\(name).\(rule.name)", delivery: .inline) {
                        [self, weak bus] envelope in
                        guard let bus else { return }
                        try accept(envelope, rule: rule, bus: bus)
                    })
                }
                if case .cancel(let late) = state.withLock({ $0.machine.subscribed(subscriptions) }) { late.forEach { $0.cancel() } }
                announceStarted()
                // A graceful shutdown and a cancellation both end the wait; either way it stops.
                try? await gracefulShutdown()
            } catch {
                // The rules subscribed before the one the bus refused.
                subscriptions.forEach { $0.cancel() }
                failure = error
            }
            if case .end(let subscriptions, let queues) = state.withLock({ $0.machine.stop() }) {
                subscriptions.forEach { $0.cancel() }
                queues.forEach { $0.finish() }
            }
            // A post in flight is cancelled: its intent stays in the journal.
            workers.cancelAll()
            return failure
        }
        // After the appends queued before it.
        await outbox.io.run { [outbox] in outbox.closeJournal() }
        // Held intents are lost with this process, and the loaders, stopped before the
        // schedulers, saved no state past them: the items come again after a restart.
        let held = state.withLock { state in
            defer {
                state.held = 0
                state.machine.finished()
            }
            return state.held
        }
        if held > 0 { outbox.io.release(held) }
        resumeIdleWaiters()
        if let failure { throw failure }
    }

    // MARK: Intake (on the publisher's task)

    func accept(_ envelope: Envelope<any Event>, rule: PostRule, bus: EventBus) throws {
        let outcomes = try PostIntake.outcomes(for: envelope, rule: rule, now: now(),
                                               claim: { key in state.withLock { $0.known.insert(key).inserted } },
                                               unclaim: { key in state.withLock { _ = $0.known.remove(key) } })
        let correlation = envelope.correlationID.description
        for outcome in outcomes {
            let intent: PostIntent
            switch outcome {
            case .failed(let failure):
                _ = try? bus.post(failure, from: Sender(name), correlation: envelope.correlationID)
                continue
            case .intent(let made):
                intent = made
            }
            let key = intent.key
            // Queued, not written: the publisher does no I/O. The worker sends only once this
            // append has finished.
            let journal = outbox.io.submit { [self, weak bus] () -> Bool in
                do throws(PostOutboxError) {
                    try outbox.append(intent)
                } catch {
                    // Never sent before it is durable: sent unrecorded, it would be posted again
                    // after a restart, since the loader's state (on the same full disk) was most
                    // likely not saved either and the item comes again. Held in memory instead;
                    // the worker retries the journal and sends it once it is written.
                    // Until it is written, no loader state may be saved after it (see `hold()`).
                    outbox.io.hold()
                    state.withLock { $0.held += 1 }
                    _ = try? bus?.post(PostHeld(rule: rule.name, key: key, service: rule.service, path: outbox.path,
                                                reason: error.reason, correlation: correlation),
                                       from: Sender(name), correlation: envelope.correlationID)
                    return false
                }
                faultHook?(.afterIntentRecorded)
                return true
            }
            enqueue(Queued(intent: intent, mayExist: false, journal: journal), rule: rule.name, bus: bus)
        }
    }

    private func enqueue(_ queued: Queued, rule: String, bus: EventBus) {
        let action = state.withLock { state -> Machine.EnqueueAction in
            let action = state.machine.enqueue(rule: rule)
            guard case .enqueue(let queue) = action else { return action }
            state.known.insert(queued.intent.key)
            state.pending += 1
            let intent = queued.intent
            state.waiting[intent.key] = Snapshot.Waiting(key: intent.key, rule: intent.rule, service: intent.service, created: intent.created)
            queue.yield(queued)
            return action
        }
        if case .unknownRule = action {
            // An intent of a rule no longer configured: it stays in the journal, reported.
            _ = try? bus.post(PostFailed(rule: rule, key: queued.intent.key, service: queued.intent.service,
                                         reason: "no rule named \(rule) is configured; the intent stays in the outbox",
                                         correlation: queued.intent.correlation, attempts: 0), from: Sender(name))
        }
    }

    package static func render(_ target: PostRule.Target, _ context: PostContext) throws(PostRenderError) -> PostIntent.Content {
        switch target {
        case .status(let text, let media, let inReplyTo):
            let path: String? = switch media {
            case nil: nil
            case .file(let file)?: file
            case .field(let field)?:
                try {() throws(PostRenderError) -> String in
                    guard case .string(let value)? = context.value(at: field), !value.isEmpty else {
                        throw PostRenderError(field: field.description, template: "media")
                    }
                    return value
                }()
            }
            return .status(text: try text.render(context), media: path, inReplyTo: try inReplyTo?.render(context))
        case .object(let bucket, let fields):
            var rendered: [String: JSONValue] = [:]
            for (key, field) in fields { rendered[key] = try field.render(context) }
            return .object(bucket: bucket, fields: rendered)
        case .mastodonStatus(let template):
            return .mastodonStatus(try template.render(context))
        case .webhook(let body):
            return .webhook(body: body.render(context))
        }
    }

    /// The event's JSON form, dates in ISO 8601.
    package static func json(of event: any Event) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encode(event, with: encoder)
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    private static func encode<E: Event>(_ event: E, with encoder: JSONEncoder) throws -> Data { try encoder.encode(event) }

    /// The event's array of new items: its field whose name starts with `new` and holds an array.
    package static func newItems(of event: JSONValue) -> [JSONValue]? {
        guard case .object(let fields) = event else { return nil }
        for key in fields.keys.sorted() where key.hasPrefix("new") {
            if case .array(let items)? = fields[key] { return items }
        }
        return nil
    }

    /// An item's identity: its `id_str`, `_id`, `id` or `objectId`, else a digest of its JSON.
    package static func itemID(_ item: JSONValue) -> String {
        if case .object(let fields) = item {
            for name in ["id_str", "_id", "id", "objectId"] {
                switch fields[name] {
                case .string(let text)? where !text.isEmpty: return text
                case let number? where number.doubleValue != nil: return PostTemplate.text(of: number)
                default: continue
                }
            }
        }
        let text = PostTemplate.text(of: item)
        return "sha1-" + SHA1.hash(Array(text.utf8)).prefix(10).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Delivery (one worker per rule)

    private func deliver(_ queued: Queued, rule: PostRule) async {
        let intent = queued.intent
        defer {
            state.withLock { state in
                state.pending -= 1
                state.waiting[intent.key] = nil
            }
            resumeIdleWaiters()
        }
        if let journal = queued.journal, !(await journal.value) {
            guard await record(intent) else { return }
        }
        guard let service = services[intent.service] else {
            await finish(intent, rule: rule, failure: "no service named \(intent.service) is configured", status: nil, requests: 0)
            return
        }
        let attempts = PostAttempts(retry: retry, clock: clock, now: now)
        switch await attempts.send(intent, through: service, mayExist: queued.mayExist, waitBeforeSending: { waitBeforeSending(rule) },
                                   progress: progressReporter(intent)) {
        case .sent(let id, let duplicate, let requests):
            await finish(intent, rule: rule, sentID: id, duplicate: duplicate, requests: requests)
        case .failed(let reason, let status, let requests):
            await finish(intent, rule: rule, failure: reason, status: status, requests: requests)
        case .stopped:
            return
        }
    }

    /// Writes a held intent to the journal, retrying with backoff (on the clock) for as long as
    /// it is refused; false when the worker is cancelled first (the post is then not made, and
    /// the item, announced again after a restart, makes a new intent).
    private func record(_ intent: PostIntent) async -> Bool {
        var refusals = 1
        var backoff = retry.initial
        while !Task.isCancelled {
            do {
                try await outbox.io.run { [outbox] () throws(PostOutboxError) in try outbox.append(intent) }
            } catch {
                refusals += 1
                guard (try? await clock.sleep(for: backoff)) != nil else { return false }
                backoff = min(backoff * 2, retry.maximum)
                continue
            }
            faultHook?(.afterIntentRecorded)
            let bus = state.withLock { state in
                state.held = max(0, state.held - 1)
                return state.machine.bus
            }
            resumeIdleWaiters()
            outbox.io.release()
            _ = try? bus?.post(PostRecorded(rule: intent.rule, key: intent.key, path: outbox.path, refusals: refusals,
                                            correlation: intent.correlation),
                               from: Sender(name), correlation: intent.correlation.flatMap(EventID.init))
            return true
        }
        return false
    }

    /// How long quiet hours or the rule's rate make the next post wait; nil to send now.
    private func waitBeforeSending(_ rule: PostRule) -> Duration? {
        let now = now()
        if let end = rule.quiet?.end(after: now) { return Self.duration(from: now, to: end) }
        if let rate = rule.rate {
            let sends = state.withLock { $0.sends[rule.name] ?? [] }
            if let slot = rate.nextSlot(after: sends, now: now) { return max(Self.duration(from: now, to: slot), .milliseconds(1)) }
        }
        return nil
    }

    private func progressReporter(_ intent: PostIntent) -> @Sendable (UploadProgress) -> Void {
        let bus = state.withLock { $0.machine.bus }
        let correlation = intent.correlation.flatMap(EventID.init)
        let sender = Sender(name)
        return { [weak bus] progress in
            _ = try? bus?.post(PostUploadProgress(
                rule: intent.rule, key: intent.key, phase: progress.phase.rawValue, bytesSent: progress.bytesSent,
                totalBytes: progress.totalBytes, processingPercent: progress.processingPercent), from: sender, correlation: correlation)
        }
    }

    private func finish(_ intent: PostIntent, rule: PostRule, sentID: String?, duplicate: Bool, requests: Int) async {
        faultHook?(.afterPostSent)
        let date = now()
        // A journal that cannot record the outcome leaves the intent pending: the next start
        // sends it again, and the service's duplicate detection (or the BaaS key) absorbs it.
        await outbox.io.run { [outbox] in _ = try? outbox.markDone(intent.key, rule: intent.rule, result: "sent", at: date) }
        let bus = state.withLock { state -> EventBus? in
            state.sent[intent.rule, default: 0] += 1
            if let rate = rule.rate {
                let window = rate.period.timeInterval
                state.sends[rule.name, default: []].removeAll { date.timeIntervalSince($0) >= window }
                state.sends[rule.name, default: []].append(date)
            }
            return state.machine.bus
        }
        _ = try? bus?.post(PostSent(rule: intent.rule, key: intent.key, service: intent.service, id: sentID, duplicate: duplicate,
                                    correlation: intent.correlation, attempts: requests),
                           from: Sender(name), correlation: intent.correlation.flatMap(EventID.init))
    }

    private func finish(_ intent: PostIntent, rule: PostRule, failure: String, status: Int?, requests: Int) async {
        let date = now()
        await outbox.io.run { [outbox] in _ = try? outbox.markDone(intent.key, rule: intent.rule, result: "failed", at: date) }
        let bus = state.withLock { state in
            state.failed[intent.rule, default: 0] += 1
            return state.machine.bus
        }
        _ = try? bus?.post(PostFailed(rule: intent.rule, key: intent.key, service: intent.service, reason: failure, status: status,
                                      correlation: intent.correlation, attempts: requests),
                           from: Sender(name), correlation: intent.correlation.flatMap(EventID.init))
    }

    package static func duration(from start: Date, to end: Date) -> Duration {
        let seconds = max(0, end.timeIntervalSince(start))
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}
