import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldStatus
import HeraldSubscribers
import HeraldIO
import HeraldSync

/// The running program: a `ServiceGroup` of the embedded sandbox (when a service points at
/// it), the status endpoint (with an `http` section), the log and file subscribers, the bus's
/// drain, the post schedulers and the loaders' schedules, made from a validated configuration.
///
/// The group starts them in that order, each once the one before it is ready, and stops them in
/// reverse: the schedules (cancelling loads in flight), the post schedulers (what they have not
/// sent stays in their outboxes), the drain (so their last events are delivered), the
/// subscribers (file sinks sync and close), the status endpoint, the sandbox. The endpoint is
/// ready (`/readyz`) once the group has started every part. See ``run(for:stopOnSignals:started:stopping:)``.
public struct HeraldDaemon: Sendable {
    /// Makes the writer of a log subscriber's output.
    public typealias WriterFactory = @Sendable (LogSettings.Output) throws -> any LogWriter

    /// The least a cluster node gives its bus to deliver what is queued at shutdown (its exporter
    /// included); a second signal still stops it at once.
    public static let clusterDrainTimeout: Duration = .seconds(30)

    /// The configuration it runs.
    public internal(set) var configuration: HeraldConfiguration
    private let makeWriter: WriterFactory
    private let drainTimeout: Duration
    let makeSchedule: @Sendable (SchedulePolicy, UInt64, ScheduleMonitor, @escaping @Sendable () async -> LoadOutcome) -> any Service
    private let makeGroup: @Sendable ([ServiceGroup.Member], [UnixSignal], Duration?, @escaping @Sendable (ServiceGroup.Event) -> Void) -> ServiceGroup
    /// The daemon's injected clock: the post schedulers, the watchdog and every cluster member
    /// wait on it (a manual one in tests).
    let clock: any Clock<Duration>
    let now: @Sendable () -> Date
    private let postFaultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)?
    let clusterConnector: ClusterConnector
    /// Makes a cluster node's members on the daemon's clock (kept as its own type, which the
    /// cluster's services are generic over).
    private let makeClusterMembers: @Sendable (HeraldDaemon, ClusterSettings, EventBus, BusDrainService, SandboxService?, StatusSources)
        -> [ServiceGroup.Member]

    /// Creates a daemon.
    ///
    /// - Parameters:
    ///   - makeWriter: where log lines go (by default standard error, standard output or an
    ///     appended file, as configured).
    ///   - drainTimeout: how long the bus may take to deliver what is queued at shutdown.
    ///   - clock: the clock schedules and `run(for:)` are measured on, and the post schedulers,
    ///     the watchdog and every cluster member wait on (a manual one in tests).
    ///   - now: the wall-clock time, to turn rate-limit reset dates into pauses; the embedded
    ///     sandbox's timeline and todos grow on it too (a fixed date in tests).
    ///   - clusterConnector: connects a daemon with a `cluster` section (tests may give one of
    ///     their own; by default NATS JetStream, see ``NATSClusterBackend``).
    public init<C: Clock>(configuration: HeraldConfiguration, makeWriter: WriterFactory? = nil, drainTimeout: Duration = .seconds(3),
                          clock: C, now: @escaping @Sendable () -> Date = { Date() },
                          clusterConnector: ClusterConnector? = nil) where C.Duration == Duration {
        self.init(configuration: configuration, makeWriter: makeWriter, drainTimeout: drainTimeout, clock: clock, now: now,
                  faultHook: nil, clusterConnector: clusterConnector)
    }

    /// A daemon whose post schedulers call `faultHook` at their fault points.
    private init<C: Clock>(configuration: HeraldConfiguration, makeWriter: WriterFactory?, drainTimeout: Duration, clock: C,
                           now: @escaping @Sendable () -> Date, faultHook postFaultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)?,
                           clusterConnector: ClusterConnector?) where C.Duration == Duration {
        self.clusterConnector = clusterConnector ?? NATSClusterBackend.connect
        self.makeSchedule = { policy, seed, monitor, load in
            LoaderSchedule(policy: policy, clock: clock, seed: seed, now: now, monitor: monitor, load: load)
        }
        self.makeGroup = { members, signals, duration, onEvent in
            ServiceGroup(members, signals: signals, stopAfter: duration, clock: clock, onEvent: onEvent)
        }
        self.clock = clock
        self.makeClusterMembers = { daemon, cluster, bus, drain, sandbox, sources in
            daemon.clusterMembers(cluster, bus: bus, drain: drain, sandbox: sandbox, sources: sources, clock: clock)
        }
        self.now = now
        self.postFaultHook = postFaultHook
        self.configuration = configuration
        self.makeWriter = makeWriter ?? Self.standardWriters(relativeTo: configuration.directory)
        self.drainTimeout = drainTimeout
    }

    /// Creates a daemon on the continuous clock (see the other initialiser for the parameters).
    public init(configuration: HeraldConfiguration, makeWriter: WriterFactory? = nil, drainTimeout: Duration = .seconds(3)) {
        self.init(configuration: configuration, makeWriter: makeWriter, drainTimeout: drainTimeout, clock: ContinuousClock())
    }

    /// A daemon on the continuous clock whose post schedulers call `postFaultHook` at their fault
    /// points: for the crash tests' helper, which stops the process there (the shipping `herald`
    /// has no hook). Not API: `@_spi(CrashTesting) import HeraldRuntime`.
    @_spi(CrashTesting)
    public init(configuration: HeraldConfiguration, postFaultHook: @escaping @Sendable (PostScheduler.FaultPoint) -> Void) {
        self.init(configuration: configuration, makeWriter: nil, drainTimeout: .seconds(3), clock: ContinuousClock(), now: { Date() },
                  faultHook: postFaultHook, clusterConnector: nil)
    }

    /// The default writers: standard error, standard output, or a file appended to (created
    /// 0600 with its directory), a relative path being resolved against `directory`.
    public static func standardWriters(relativeTo directory: URL) -> WriterFactory {
        { output in
            switch output {
            case .standardError: FileHandleLogWriter.standardError()
            case .standardOutput: FileHandleLogWriter.standardOutput()
            case .file(let path): try FileHandleLogWriter.appending(toFile: ConfigLoader.resolve(path, against: directory).path)
            }
        }
    }

    /// Runs until `duration` has passed (forever when nil), SIGINT or SIGTERM comes (with
    /// `stopOnSignals`), the calling task is cancelled, or a part fails; then stops every part
    /// in reverse order.
    ///
    /// - Parameters:
    ///   - stopOnSignals: trap SIGINT and SIGTERM (they no longer end the process) and stop on
    ///     the first; the same signal again, over a second later, cancels every part instead of
    ///     letting it drain (see ``DaemonStopping/signalAgain(_:)``).
    ///   - host: reloads of the configuration file (SIGHUP, `POST /-/reload`) and systemd
    ///     notifications (see ``DaemonHost``); none by default.
    ///   - started: called once every part runs, before the first loads.
    ///   - stopping: called when the daemon begins to stop, and why.
    ///   - reloaded: called after each reload, applied or refused (as published on the bus).
    /// - Throws: ``DaemonError`` when a part cannot start (the sandbox's port, a log file) or
    ///   fails, naming it; the parts started before it have been stopped.
    @discardableResult
    public func run(for duration: Duration? = nil, stopOnSignals: Bool = false, host: DaemonHost = DaemonHost(),
                    started: @escaping @Sendable (DaemonStarted) -> Void = { _ in },
                    stopping: @escaping @Sendable (DaemonStopping) -> Void = { _ in },
                    reloaded: @escaping @Sendable (ConfigReloaded) -> Void = { _ in }) async throws(DaemonError) -> DaemonStopped {
        // Trapped first, so a SIGHUP while starting neither ends the process nor is lost.
        let hangups = host.reloadOnSIGHUP && host.configFile != nil ? await UnixSignalsSequence(trapping: .sighup) : nil
        let sandbox = configuration.usesSandbox ? SandboxService(settings: sandboxSettings()) : nil
        // The archives' tails are read (up to their read limit, 32 MiB each) on a thread of
        // their own, not on the shared pool.
        let configuration = self.configuration
        let first = await BlockingIOThread(name: "herald.archive-scan").run { Self.firstSequence(after: configuration) }
        let bus = EventBus(configuration: .init(firstSequence: first))
        // A cluster node's last events go to JetStream while the bus drains; across a server's
        // failover their acks can take longer than a lone daemon's few seconds of delivery.
        let drain = BusDrainService(bus: bus, timeout: configuration.cluster == nil ? drainTimeout : max(drainTimeout, Self.clusterDrainTimeout))
        // One first-in-first-out thread for the loaders' state files and the post outboxes:
        // a loader's state is written after the intents its announcement queued, and refused
        // while an outbox holds one it could not write (exactly-once posting rests on it).
        let store = LoaderStateStore(directory: configuration.stateDirectory, io: BlockingIOThread(name: "herald.state-io"))
        var members: [ServiceGroup.Member] = []
        if let sandbox { members.append(.init("sandbox", sandbox)) }
        // The status endpoint next: it serves (and /readyz says "not ready") while the rest starts.
        let sources = StatusSources(bus: bus)
        sources.updateConfig { status in
            status.path = host.configFile?.path
            status.sha1 = configuration.source?.sha1
            status.loadedAt = configuration.source?.loadedAt
            status.lastSuccess = configuration.source?.loadedAt
        }
        let endpoint = configuration.http.map { http in StatusEndpoint(host: http.host, port: http.port, sources: sources, now: now) }
        if let endpoint { members.append(.init("http", endpoint)) }
        let runtime = DaemonRuntime(daemon: self, bus: bus, store: store, sandbox: sandbox, sources: sources)
        for name in configuration.subscribers.keys.sorted() {
            guard let settings = configuration.subscribers[name], let member = runtime.subscriberMember(name, settings) else { continue }
            runtime.subscribers.addAtStart(member)
        }
        members.append(.init("subscribers", runtime.subscribers))
        if let cluster = configuration.cluster {
            members += makeClusterMembers(self, cluster, bus, drain, sandbox, sources)
        } else {
            members += aloneMembers(runtime, drain: drain)
        }
        if let file = host.configFile {
            let queue = ReloadQueue { [self] in await reload(runtime, from: file, host: host, reloaded: reloaded) }
            members.append(.init("reload", ReloadService(queue: queue, signals: hangups, sources: sources)))
        }
        if let notifier = host.notifier, let interval = notifier.watchdogInterval {
            let alone = configuration.cluster == nil
            // On a cluster node a loader runs where its lease is held: only the bus is checked.
            members.append(.init("watchdog", WatchdogService(
                interval: interval, bus: bus,
                loadersAlive: { [runtime, now] in !alone || runtime.loaderLiveness.problem(now: now(), grace: interval * 2) == nil },
                sleep: { [clock] in try await clock.sleep(for: $0) },
                send: { notifier.send($0) })))
        }
        let announcement = announcement
        let group = makeGroup(members, stopOnSignals ? [.sigint, .sigterm] : [], duration) { event in
            switch event {
            case .started:
                sources.markReady()
                host.notifier?.send("READY=1\nSTATUS=" + Self.statusLine(runtime.configuration))
                started(announcement(sandbox?.sandbox?.baseURL, endpoint?.url))
            case .stopping(let reason):
                host.notifier?.send("STOPPING=1\nSTATUS=stopping")
                stopping(DaemonStopping(reason))
            case .stoppingAtOnce(let signal): stopping(.signalAgain(signal.rawValue))
            }
        }
        do {
            try await group.run()
        } catch {
            throw error.underlying as? DaemonError ?? DaemonError(DaemonRuntime.describe(error))
        }
        // No report: the run stopped before the drain started, so nothing that publishes ran.
        let report = drain.shutdownReport
        return DaemonStopped(drained: report?.drained ?? true, discarded: report?.totalDiscarded ?? 0)
    }

    /// The members after the log and archive subscribers when the daemon runs alone: the bus's
    /// drain, the post schedulers and the loaders (each kind a set a reload changes).
    private func aloneMembers(_ runtime: DaemonRuntime, drain: BusDrainService) -> [ServiceGroup.Member] {
        let names = configuration.subscribers.keys.sorted()
        // Post schedulers after the log and archive subscribers, so the posts they resume from
        // their outboxes are seen there.
        for name in names {
            guard case .post(let posting)? = configuration.subscribers[name] else { continue }
            runtime.posters.addAtStart(runtime.posterMember(name, posting))
        }
        for id in configuration.loaders.keys.sorted() {
            guard let settings = configuration.loaders[id] else { continue }
            runtime.loaders.addAtStart(runtime.loaderMember(id, settings))
        }
        return [.init("bus", drain), .init("posts", runtime.posters), .init("loaders", runtime.loaders)]
    }

    private func sandboxSettings() -> SandboxConfiguration {
        var settings = ServiceDirectory.sandboxConfiguration(for: configuration)
        settings.now = now
        return settings
    }

    /// What ``run(for:stopOnSignals:started:stopping:)`` tells its host once every part runs.
    private var announcement: @Sendable (URL?, URL?) -> DaemonStarted {
        let loaders = configuration.loaders.keys.sorted()
        // Log subscribers are named as their events' senders are; post subscribers come last,
        // as they start after the others.
        var started: [String] = [], posters: [String] = []
        for name in configuration.subscribers.keys.sorted() {
            switch configuration.subscribers[name] {
            case .log?: started.append("subscriber.\(name)")
            case .file?: started.append(name)
            case .post?: posters.append(name)
            case nil: break
            }
        }
        let subscribers = started + posters
        return { url, status in DaemonStarted(sandboxURL: url, statusURL: status, loaders: loaders, subscribers: subscribers) }
    }

    /// One more than the largest `seq` in the file subscribers' archives (1 when there are
    /// none), so the archives' sequence numbers go on across restarts instead of repeating.
    ///
    /// Read before the sinks open their files: a torn last line, which the opening moves away,
    /// is not counted. An archive that cannot be read counts as empty; its sink cannot open it
    /// either, and reports that on the bus.
    static func firstSequence(after configuration: HeraldConfiguration) -> UInt64 {
        var last: UInt64 = 0
        for settings in configuration.subscribers.values {
            guard case .file(let archive) = settings else { continue }
            let path = ConfigLoader.resolve(archive.path, against: configuration.directory).path
            if let archived = try? ArchiveReader(path: path).lastSequence() { last = max(last, archived) }
        }
        return last == .max ? last : last + 1
    }

    /// A file subscriber's sink (nothing opened until it starts).
    func makeFileSink(_ archive: ArchiveSettings) -> FileSink {
        FileSink(
            name: archive.name, path: ConfigLoader.resolve(archive.path, against: configuration.directory).path,
            patterns: archive.topics.map { TopicPattern(stringLiteral: $0) }, durability: archive.durability,
            syncEvery: archive.syncEvery, rotation: archive.rotation)
    }

    /// A log subscriber, its output opened.
    func makeLogSubscriber(_ log: LogSettings) throws(DaemonError) -> LogSubscriber {
        let writer: any LogWriter
        do {
            writer = try makeWriter(log.output)
        } catch {
            throw DaemonError("subscribers.\(log.name).output: cannot open: \(error.localizedDescription)")
        }
        return LogSubscriber(
            name: "subscriber.\(log.name)", patterns: log.topics.map { TopicPattern(stringLiteral: $0) },
            level: log.level, format: log.format, writer: writer,
            summarizers: [LoaderEventSummaries.summarizer, ClusterEventSummaries.summarizer, StatusEventSummaries.summarizer,
                          DaemonEventSummaries.summarizer],
            redactor: Redactor(secrets: configuration.secrets))
    }

    /// The services a post subscriber's rules name, as clients.
    func postServices(_ name: String, _ rules: [PostRule], sandbox: Sandbox?,
                      media: MediaAccess = .anywhere) throws(DaemonError) -> [String: any PostService] {
        let directory = ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport())
        var services: [String: any PostService] = [:]
        for service in Set(rules.map(\.service)) {
            switch configuration.services[service] {
            case .twitter?: services[service] = TwitterPostService(client: try directory.twitter(service), baseDirectory: configuration.directory,
                                                                              mediaAccess: media)
            case .x?: services[service] = XPostService(client: try directory.x(service), baseDirectory: configuration.directory,
                                                        mediaAccess: media)
            case .baas?: services[service] = BaaSPostService(client: try directory.baas(service))
            case .mastodon?: services[service] = MastodonPostService(client: try directory.mastodon(service, clock: clock, now: now),
                                                                      baseDirectory: configuration.directory, mediaAccess: media)
            case .webhook?: services[service] = WebhookPostService(client: try directory.webhook(service, now: now))
            default: throw DaemonError("subscribers.\(name): service \(service) cannot post")
            }
        }
        return services
    }

    /// The post scheduler of post subscriber `name`, whose outbox is read and written on `io`:
    /// the daemon gives it its loaders' state-store thread (``LoaderStateStore/io``), so that a
    /// loader's state never reaches the disk before the intents its announcement queued.
    func makePostScheduler(_ name: String, _ posting: PostingSettings, sandbox: Sandbox?, io: BlockingIOThread) throws(DaemonError) -> PostScheduler {
        let services = try postServices(name, posting.rules, sandbox: sandbox)
        let outbox = posting.outbox.map { ConfigLoader.resolve($0, against: configuration.directory) }
            ?? configuration.stateDirectory.appendingPathComponent("outbox").appendingPathComponent("\(name).jsonl")
        return PostScheduler(name: name, rules: posting.rules, services: services, outboxPath: outbox.path, io: io, retry: posting.retry,
                             clock: clock, now: now, faultHook: postFaultHook)
    }

    func makeLoader(_ id: String, _ settings: LoaderConfiguration, bus: EventBus, store: any LoaderStateStorage,
                            sandbox: Sandbox?) throws(DaemonError) -> any Loader {
        let services = ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport())
        switch settings.kind {
        case .timeline(let request):
            let client = try services.twitter(settings.service)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try TimelineLoader(id: id, client: client, request: request, bus: bus, stateStore: store)
            }
        case .xTimeline(let request):
            let client = try services.x(settings.service)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try XTimelineLoader(id: id, client: client, request: request, bus: bus, stateStore: store, now: now)
            }
        case .tiqav(let request):
            let client = try services.tiqav(settings.service)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try TiqavLoader(id: id, client: client, request: request, bus: bus, stateStore: store)
            }
        case .todo(let bucket):
            let client = try services.baas(settings.service)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try TodoLoader(id: id, client: client, bucket: bucket, bus: bus, stateStore: store)
            }
        case .mastodon(let request):
            let client = try services.mastodon(settings.service, clock: clock, now: now)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try MastodonLoader(id: id, client: client, request: request, bus: bus, stateStore: store)
            }
        case .feed(let feed):
            let url = try services.feedURL(feed)
            let client = FeedClient(transport: services.transport, timeout: feed.timeout, maxBytes: feed.maxBytes, now: now)
            return try Self.setUp(id) { () throws(LoaderSetupError) in
                try FeedLoader(id: id, url: url, client: client, bus: bus, stateStore: store)
            }
        }
    }

    private static func setUp(_ id: String, _ make: () throws(LoaderSetupError) -> any Loader) throws(DaemonError) -> any Loader {
        do {
            return try make()
        } catch {
            throw DaemonError("loaders.\(id): \(error)")
        }
    }

    /// A stable seed per loader, so jitter differs between loaders but not between runs.
    static func seed(_ id: String) -> UInt64 {
        id.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    }
}
