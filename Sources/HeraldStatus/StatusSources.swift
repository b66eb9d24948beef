import Foundation
import Herald
import HeraldLoaders
import HeraldSubscribers
import HeraldSync

/// What the status endpoint reports on: the bus, and each loader's schedule, archive and post
/// scheduler as the daemon makes them. Parts register as they start; ``report(now:streams:)``
/// reads them all through their own snapshot APIs, none of which waits for I/O.
///
/// Per-topic counts are bounded, whoever makes the topics (another node, any NATS client that
/// publishes under `herald.>`): the daemon's own topics (its loaders', its post rules', the
/// bus's and the endpoint's) each have theirs; at most ``otherTopicSeries`` other topics get
/// theirs, first come first served and kept for good; the rest are counted together as
/// ``otherTopics``. No topic ever moves between its own counts and the fold, so every count,
/// the fold's included, only grows, as a Prometheus counter must.
///
/// `Sendable`: its lists are behind a lock.
public final class StatusSources: Sendable {
    /// A loader as the endpoint knows it.
    public struct Loader: Sendable {
        /// Its id.
        public var id: String
        /// `timeline`, `tiqav` or `todo`.
        public var kind: String
        /// What its schedule records.
        public var monitor: ScheduleMonitor

        /// A loader `id` of `kind` whose schedule reports to `monitor`.
        public init(id: String, kind: String, monitor: ScheduleMonitor) {
            self.id = id
            self.kind = kind
            self.monitor = monitor
        }
    }

    private struct Parts {
        var loaders: [String: Loader] = [:]
        var archives: [String: FileSink] = [:]
        var posters: [String: PostScheduler] = [:]
        var ready = false
        var readinessChecks: [@Sendable () -> String?] = []
        /// Topics other than the daemon's own that have counts of their own.
        var admittedTopics: Set<Topic> = []
    }

    /// How many topics other than the daemon's own get counts of their own by default: 64.
    public static let defaultOtherTopicSeries = 64
    /// The name the other topics are counted under together: `(other)` (no topic is named so:
    /// a topic with that name is counted there too).
    public static let otherTopics = "(other)"

    /// The bus reported on.
    public let bus: EventBus
    /// How many topics other than the daemon's own get counts of their own.
    public let otherTopicSeries: Int
    private let parts = SyncLock(Parts())
    private let config = SyncLock(StatusConfig())
    private let reloader = SyncLock<(@Sendable () async -> StatusReloadResult)?>(nil)

    /// Sources on `bus`, with no part registered yet and not ready; `otherTopicSeries` topics
    /// besides the daemon's own get counts of their own.
    public init(bus: EventBus, otherTopicSeries: Int = StatusSources.defaultOtherTopicSeries) {
        self.bus = bus
        self.otherTopicSeries = max(0, otherTopicSeries)
    }

    /// Adds (or replaces, by id) a loader.
    public func add(_ loader: Loader) {
        parts.withLock { $0.loaders[loader.id] = loader }
    }

    /// Adds (or replaces, by name) an archive.
    public func add(archive: FileSink) {
        parts.withLock { $0.archives[archive.name] = archive }
    }

    /// Removes the loader `id` (a reload removed it).
    public func removeLoader(_ id: String) {
        parts.withLock { _ = $0.loaders.removeValue(forKey: id) }
    }

    /// Removes the archive `name` (a reload removed it).
    public func removeArchive(_ name: String) {
        parts.withLock { _ = $0.archives.removeValue(forKey: name) }
    }

    /// Removes the post scheduler `name` (a reload removed it).
    public func removePoster(_ name: String) {
        parts.withLock { _ = $0.posters.removeValue(forKey: name) }
    }

    /// The configuration and its reloads, as reported.
    public var configStatus: StatusConfig { config.withLock { $0 } }

    /// Changes what is reported of the configuration.
    public func updateConfig(_ change: (inout StatusConfig) -> Void) {
        config.withLock { change(&$0) }
    }

    /// Sets what `POST /-/reload` runs (nil: the endpoint answers 503, the daemon does not reload).
    public func setReloader(_ reload: (@Sendable () async -> StatusReloadResult)?) {
        reloader.withLock { $0 = reload }
    }

    /// What `POST /-/reload` runs, if anything.
    var reload: (@Sendable () async -> StatusReloadResult)? { reloader.withLock { $0 } }

    /// Adds (or replaces, by name) a post scheduler.
    public func add(poster: PostScheduler) {
        parts.withLock { $0.posters[poster.name] = poster }
    }

    /// Says every part of the program has started: `/readyz` answers 200 from now on.
    public func markReady() {
        parts.withLock { $0.ready = true }
    }

    /// Adds a condition of readiness after the start: `check` returns why the daemon is not
    /// ready now (the cluster connection is down), or nil.
    public func addReadinessCheck(_ check: @escaping @Sendable () -> String?) {
        parts.withLock { $0.readinessChecks.append(check) }
    }

    /// Why the daemon is not ready now, or nil when it is.
    public var notReadyReason: String? {
        let (ready, checks) = parts.withLock { ($0.ready, $0.readinessChecks) }
        guard ready else { return "the daemon is starting" }
        for check in checks { if let reason = check() { return reason } }
        return nil
    }

    /// Everything, now. `process` is read from `/proc` by the caller (a connection thread).
    func report(now: Date, streams: StatusReport.Streams, process: ProcessStatistics?) -> StatusReport {
        let parts = parts.withLock { $0 }
        let stats = bus.stats()
        let topics = topicCounts(stats.topics, own: Self.ownTopics(parts), admitted: parts.admittedTopics)
        let subscriptions = stats.subscriptions.map { sub in
            StatusReport.Subscription(id: sub.id, name: sub.name, pattern: sub.pattern, delivery: sub.delivery, delivered: sub.delivered,
                                      dropped: sub.dropped, failed: sub.failed, discarded: sub.discarded, queueDepth: sub.queueDepth,
                                      highWaterMark: sub.highWaterMark)
        }
        let loaders = parts.loaders.values.sorted { $0.id < $1.id }.map { Self.report(of: $0) }
        let archives = parts.archives.values.sorted { $0.name < $1.name }.map { sink in
            let statistics = sink.statistics
            return StatusReport.Archive(name: sink.name, path: sink.path, lines: statistics.lines, bytes: statistics.bytes,
                                        rotations: statistics.rotations, syncs: statistics.syncs, failures: statistics.failures)
        }
        let posts = parts.posters.values.sorted { $0.name < $1.name }.map { poster in
            let snapshot = poster.snapshot
            return StatusReport.Poster(
                name: poster.name, held: snapshot.held,
                pending: snapshot.waiting.map { .init(key: $0.key, rule: $0.rule, service: $0.service, created: $0.created) },
                sent: snapshot.sent, failed: snapshot.failed, rules: poster.rules.map(\.name))
        }
        return StatusReport(
            time: now, ready: notReadyReason == nil, bus: .init(published: stats.published, topics: topics, subscriptions: subscriptions),
            loaders: loaders, archives: archives, posts: posts, streams: streams, process: process, config: configStatus)
    }

    /// The counts of each topic with counts of its own, by name, then of ``otherTopics``
    /// together (when there are any). Admits newcomers while there is room, the busiest first.
    private func topicCounts(_ all: [Herald.Topic: TopicStatistics], own: Set<Herald.Topic>,
                             admitted known: Set<Herald.Topic>) -> [StatusReport.Topic] {
        var admitted = known
        let newcomers = all.filter { topic, _ in !own.contains(topic) && !known.contains(topic) && topic.name != Self.otherTopics }
        if !newcomers.isEmpty, known.count < otherTopicSeries {
            let ranked = newcomers.sorted { $0.value.published != $1.value.published ? $0.value.published > $1.value.published : $0.key < $1.key }
            admitted = parts.withLock { parts in
                // Another report may have admitted some meanwhile: the room is counted here.
                for (topic, _) in ranked where parts.admittedTopics.count < otherTopicSeries {
                    parts.admittedTopics.insert(topic)
                }
                return parts.admittedTopics
            }
        }
        var topics: [StatusReport.Topic] = []
        var other = StatusReport.Topic(topic: Self.otherTopics, published: 0, delivered: 0, dropped: 0, failed: 0)
        var folded = false
        for (topic, counts) in all {
            if own.contains(topic) || admitted.contains(topic) {
                topics.append(StatusReport.Topic(topic: topic.name, published: counts.published, delivered: counts.delivered,
                                                 dropped: counts.dropped, failed: counts.failed))
            } else {
                folded = true
                other.published &+= counts.published
                other.delivered &+= counts.delivered
                other.dropped &+= counts.dropped
                other.failed &+= counts.failed
            }
        }
        topics.sort { $0.topic < $1.topic }
        if folded { topics.append(other) }
        return topics
    }

    /// The fixed topics of a cluster node's reports (`ClusterEvents` in HeraldCluster, which this
    /// module does not import).
    static let clusterTopics = ["cluster.post.refused", "cluster.import.malformed", "cluster.export.retrying", "cluster.export.skipped"]
        + ["closed", "connected", "disconnected", "discovered", "dropped", "error", "lameduck", "reconnected", "slow", "unreachable", "waiting"]
            .map { "cluster.connection.\($0)" }

    /// The topics of the daemon's own parts: the bus's reports, the endpoint's, and those of
    /// each registered loader and post rule. Bounded by the configuration, whatever the network
    /// sends.
    private static func ownTopics(_ parts: Parts) -> Set<Herald.Topic> {
        var topics: Set<Herald.Topic> = [SubscriberFailed.topic, EventsDropped.topic, DeadLetter.topic, StatusStreamDropped.topic]
        for id in parts.loaders.keys {
            for suffix in ["finished", "failed", "state.corrupt", "state.unwritable"] { topics.insert(LoaderTopics.topic(id, suffix)) }
            // A cluster node's lease reports (bounded by the loaders, like theirs).
            for change in ["acquired", "lost"] {
                if let lease = try? Herald.Topic(tokens: "cluster", "lease", id, change) { topics.insert(lease) }
            }
        }
        // A cluster node's own reports, the ones an operator alerts on among them: never folded
        // into "(other)" by topics the network sends first.
        for name in Self.clusterTopics {
            if let topic = try? Herald.Topic(validating: name) { topics.insert(topic) }
        }
        for poster in parts.posters.values {
            for rule in poster.rules.map(\.name) {
                for what in ["sent", "failed", "held", "recorded"] { topics.insert(PostTopics.topic(rule, what)) }
                if let upload = try? Herald.Topic(tokens: "upload", rule, "progress") { topics.insert(upload) }
            }
        }
        return topics
    }

    private static func report(of loader: Loader) -> StatusReport.Loader {
        let snapshot = loader.monitor.snapshot
        var result: String?, message: String?
        switch snapshot.lastOutcome {
        case .finished(let items, let new)?:
            result = "finished"
            message = "\(items) items, \(new) new"
        case .failed(let error)?:
            result = "failed"
            message = error.description
        case nil:
            break
        }
        return StatusReport.Loader(
            id: loader.id, kind: loader.kind, state: snapshot.state.rawValue, pulls: snapshot.pulls, failures: snapshot.failures,
            newItems: snapshot.newItems, lastRun: snapshot.lastRun, lastResult: result, lastMessage: message,
            lastSuccess: snapshot.lastSuccess, nextRun: snapshot.nextRun, consecutiveFailures: snapshot.consecutiveFailures)
    }
}
