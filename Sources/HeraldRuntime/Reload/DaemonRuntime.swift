import Foundation
import HeraldIO
import Herald
import HeraldLifecycle
import HeraldLoaders
import HeraldSandbox
import HeraldStatus
import HeraldSubscribers
import HeraldSync

/// The parts of a running daemon that a reload changes: the log and file subscribers, the post
/// schedulers and the loaders, each kind in a ``ServiceSet`` of the daemon's group, and the
/// objects behind them (to reopen their files and to report on them).
///
/// ``apply(_:)`` changes only what differs (see ``ConfigDifference``), in an order that loses
/// nothing accepted: loaders that go or change stop first (a load in flight is cancelled, nothing
/// is published for it); subscribers that go or change end after delivering what waits in their
/// mailboxes; post schedulers that go or change stop (their unsent posts stay in their outboxes,
/// which the new ones resume); every log file and archive left is reopened (logrotate moved
/// it); then the new subscribers, schedulers and loaders start, in that order.
///
/// `Sendable`: its state is behind a lock.
final class DaemonRuntime: Sendable {
    private struct State {
        var daemon: HeraldDaemon
        var logs: [String: LogSubscriber] = [:]
        var sinks: [String: FileSink] = [:]
        var posters: [String: PostScheduler] = [:]
        /// The monitor of each loader's latest schedule.
        var monitors: [String: ScheduleMonitor] = [:]
    }

    let bus: EventBus
    /// The loaders' state files; its I/O thread is also the post schedulers' (see
    /// ``HeraldDaemon/makePostScheduler(_:_:sandbox:io:)``).
    let store: LoaderStateStore
    let sandbox: SandboxService?
    let sources: StatusSources
    /// The log and file subscribers (`subscribers.<name>`).
    let subscribers = ServiceSet()
    /// The post schedulers (`subscribers.<name>`); unused on a cluster node.
    let posters = ServiceSet()
    /// The loaders' schedules (`loaders.<id>`); unused on a cluster node.
    let loaders = ServiceSet()
    private let state: SyncLock<State>
    /// Called by a reload once what goes or changes has stopped, before the new parts start:
    /// tests publish there, where a replaced part is not running.
    let whileReplaced = SyncLock<(@Sendable () async -> Void)?>(nil)

    init(daemon: HeraldDaemon, bus: EventBus, store: LoaderStateStore, sandbox: SandboxService?, sources: StatusSources) {
        self.bus = bus
        self.store = store
        self.sandbox = sandbox
        self.sources = sources
        self.state = SyncLock(State(daemon: daemon))
    }

    /// The post scheduler running post subscriber `name`, if any.
    func poster(_ name: String) -> PostScheduler? { state.withLock { $0.posters[name] } }

    /// What the latest schedule of loader `id` has done, if it has one.
    func scheduleSnapshot(ofLoader id: String) -> ScheduleSnapshot? { state.withLock { $0.monitors[id] }?.snapshot }

    /// The loaders of the running configuration, as the watchdog checks them.
    var loaderLiveness: LoaderLiveness {
        LoaderLiveness(ids: Array(configuration.loaders.keys), running: { [loaders] in loaders.contains("loaders.\($0)") },
                       snapshot: { [self] in scheduleSnapshot(ofLoader: $0) })
    }

    /// The configuration running now.
    var configuration: HeraldConfiguration { state.withLock { $0.daemon.configuration } }

    private var daemon: HeraldDaemon { state.withLock { $0.daemon } }

    // MARK: Members

    /// The member running log or file subscriber `name` (nil for a post subscriber).
    func subscriberMember(_ name: String, _ settings: SubscriberConfiguration) -> ServiceGroup.Member? {
        let daemon = daemon
        switch settings {
        case .log(let log):
            return .init("subscribers.\(name)", DeferredService { [self] in
                let subscriber = try daemon.makeLogSubscriber(log)
                state.withLock { $0.logs[name] = subscriber }
                return subscriber.service(on: bus)
            })
        case .file(let archive):
            return .init("subscribers.\(name)", DeferredService { [self] in
                let sink = daemon.makeFileSink(archive)
                state.withLock { $0.sinks[name] = sink }
                sources.add(archive: sink)
                return sink.service(on: bus)
            })
        case .post:
            return nil
        }
    }

    /// The member running post subscriber `name`.
    func posterMember(_ name: String, _ posting: PostingSettings) -> ServiceGroup.Member {
        let daemon = daemon
        return .init("subscribers.\(name)", DeferredService { [self] in
            let scheduler = try daemon.makePostScheduler(name, posting, sandbox: sandbox?.sandbox, io: store.io)
            state.withLock { $0.posters[name] = scheduler }
            sources.add(poster: scheduler)
            return scheduler.service(on: bus)
        })
    }

    /// The member running loader `id`'s schedule.
    func loaderMember(_ id: String, _ settings: LoaderConfiguration) -> ServiceGroup.Member {
        let daemon = daemon
        let monitor = ScheduleMonitor()
        state.withLock { $0.monitors[id] = monitor }
        sources.add(StatusSources.Loader(id: id, kind: settings.kind.name, monitor: monitor))
        return .init("loaders.\(id)", DeferredService { [self] in
            let loader = try daemon.makeLoader(id, settings, bus: bus, store: store, sandbox: sandbox?.sandbox)
            return daemon.makeSchedule(settings.schedule, HeraldDaemon.seed(id), monitor, { await loader.load() })
        })
    }

    // MARK: Reload

    /// What a reload did: what changed, what failed to start, what was not applied.
    struct Applied: Sendable {
        var changes: [String]
        var errors: [String]
        var notes: [String]
    }

    /// Applies `new` (validated already) over the running configuration.
    func apply(_ new: HeraldConfiguration) async -> Applied {
        let old = configuration
        let difference = ConfigDifference(from: old, to: new)
        var notes = difference.needsRestart.map { "\($0): changed, but applies only at the next start (restart herald)" }
        var errors: [String] = []
        let clustered = old.cluster != nil
        let live = Self.liveSubscribers(difference, old: old, new: new, clustered: clustered)
        if clustered, !(difference.addedLoaders + difference.removedLoaders + difference.changedLoaders + difference.changedServices).isEmpty
            || live.skippedPosters {
            notes.append("loaders, services and post subscribers of a cluster node change only at the next start (restart herald)")
        }
        let next = daemon.reconfigured(new)

        // 1. Loaders that go or change stop (a load in flight is cancelled).
        if !clustered {
            for id in difference.removedLoaders + difference.changedLoaders {
                await loaders.remove("loaders.\(id)")
                if difference.removedLoaders.contains(id) {
                    sources.removeLoader(id)
                    state.withLock { $0.monitors[id] = nil }
                }
            }
            // A loader that now reads something else starts with no state; its old state is
            // kept beside, as `<id>.json.replaced`, not deleted.
            // On the thread the state files are written on, after any write queued there.
            let urls = difference.loadersWithNewIdentity.compactMap { store.fileURL(for: $0) }
            await store.io.run {
                for url in urls where FileManager.default.fileExists(atPath: url.path) {
                    let aside = url.appendingPathExtension("replaced")
                    try? FileManager.default.removeItem(at: aside)
                    try? FileManager.default.moveItem(at: url, to: aside)
                }
            }
        }
        // 2. Post schedulers that go or change stop; what they have not sent stays in their
        // outboxes. A changed one misses no event meanwhile: the handover keeps them for it.
        let replaced = live.stoppedPosters.filter(live.startedPosters.contains)
        let handover = replaced.isEmpty ? nil : PostHandover(bus: bus, patterns: replaced.flatMap { name -> [TopicPattern] in
            if case .post(let posting)? = new.subscribers[name] { posting.rules.map(\.pattern) } else { [] }
        })
        for name in live.stoppedPosters {
            let scheduler = state.withLock { $0.posters.removeValue(forKey: name) }
            // What waits, or is being sent, before the stop (which ends the workers).
            let waiting = scheduler?.snapshot.waiting ?? []
            await posters.remove("subscribers.\(name)")
            sources.removePoster(name)
            let kept = Set(Self.rules(of: new.subscribers[name]))
            let orphaned = waiting.filter { !kept.contains($0.rule) }
            if !orphaned.isEmpty {
                let rules = Set(orphaned.map(\.rule)).sorted().joined(separator: ", ")
                notes.append("subscribers.\(name): \(orphaned.count) pending post(s) of removed rule(s) \(rules) stay in the outbox, unsent "
                    + "(no rule says how to send them now; add the rule back to send them)")
            }
        }
        // 3. Log and file subscribers that go or change end after delivering what they hold.
        for name in live.stoppedSubscribers {
            await subscribers.remove("subscribers.\(name)")
            state.withLock { state in
                state.logs[name] = nil
                if state.sinks.removeValue(forKey: name) != nil { sources.removeArchive(name) }
            }
        }
        state.withLock { $0.daemon = next }
        if let hook = whileReplaced.withLock({ $0 }) { await hook() }
        // 4. Every log file and archive left is reopened (logrotate moved it), before anything
        // new publishes: what the new parts cause goes to the new files.
        await reopenFiles()
        // 5. The new ones start: subscribers, then post schedulers, then loaders.
        for name in live.startedSubscribers {
            guard let settings = new.subscribers[name], let member = subscriberMember(name, settings) else { continue }
            do { try await subscribers.add(member) } catch { errors.append(Self.describe(error)) }
        }
        for name in live.startedPosters {
            guard case .post(let posting)? = new.subscribers[name] else { continue }
            do { try await posters.add(posterMember(name, posting)) } catch { errors.append(Self.describe(error)) }
        }
        if let handover {
            let schedulers = state.withLock { state in state.posters.filter { replaced.contains($0.key) } }
            errors += handover.finish(into: schedulers)
        }
        if !clustered {
            for id in difference.addedLoaders + difference.changedLoaders {
                guard let settings = new.loaders[id] else { continue }
                do {
                    try await loaders.add(loaderMember(id, settings))
                } catch {
                    errors.append(Self.describe(error))
                    sources.removeLoader(id)
                }
            }
        }
        return Applied(changes: difference.lines, errors: errors, notes: notes)
    }

    /// Reopens every log file and archive.
    func reopenFiles() async {
        let (logs, sinks) = state.withLock { (Array($0.logs.values), Array($0.sinks.values)) }
        for log in logs { await log.reopen() }
        for sink in sinks { await sink.reopen() }
    }

    private struct LiveSubscribers {
        var stoppedSubscribers: [String] = []
        var startedSubscribers: [String] = []
        var stoppedPosters: [String] = []
        var startedPosters: [String] = []
        var skippedPosters = false
    }

    /// Which subscribers stop and start, by the set they run in (a name may change kind).
    private static func liveSubscribers(_ difference: ConfigDifference, old: HeraldConfiguration, new: HeraldConfiguration,
                                        clustered: Bool) -> LiveSubscribers {
        var live = LiveSubscribers()
        for name in difference.removedSubscribers + difference.changedSubscribers {
            if case .post? = old.subscribers[name] {
                if clustered { live.skippedPosters = true } else { live.stoppedPosters.append(name) }
            } else {
                live.stoppedSubscribers.append(name)
            }
        }
        for name in difference.addedSubscribers + difference.changedSubscribers {
            if case .post? = new.subscribers[name] {
                if clustered { live.skippedPosters = true } else { live.startedPosters.append(name) }
            } else {
                live.startedSubscribers.append(name)
            }
        }
        return live
    }

    private static func rules(of subscriber: SubscriberConfiguration?) -> [String] {
        if case .post(let posting)? = subscriber { posting.rules.map(\.name) } else { [] }
    }

    /// The innermost failure, named by the innermost member (a ``DaemonError`` names itself).
    static func describe(_ error: ServiceGroupError) -> String {
        var name = error.service
        var inner: any Error = error
        while let group = inner as? ServiceGroupError {
            name = group.service
            guard let underlying = group.underlying else { return group.description }
            inner = underlying
        }
        if let daemon = inner as? DaemonError { return daemon.description }
        return "\(name): \(inner)"
    }
}
