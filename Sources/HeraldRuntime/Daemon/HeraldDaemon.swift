import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSubscribers

/// The running program: the embedded sandbox (when a service points at it), the bus, the log
/// subscribers, the loaders and their schedules, started from a validated configuration.
///
/// ``run(for:started:)`` returns when its duration has passed or its task is cancelled; it then
/// stops the schedules (cancelling loads in flight), drains the bus, stops the subscribers and
/// the sandbox, in that order.
public struct HeraldDaemon: Sendable {
    /// Makes the writer of a log subscriber's output.
    public typealias WriterFactory = @Sendable (SubscriberConfiguration.Output) throws -> any LogWriter

    /// The configuration it runs.
    public let configuration: HeraldConfiguration
    private let makeWriter: WriterFactory
    private let drainTimeout: Duration
    private let scheduler: @Sendable ([(any Loader, SchedulePolicy)], Duration?) async -> Void
    private let postClock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let postFaultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)?

    /// Creates a daemon.
    ///
    /// - Parameters:
    ///   - makeWriter: where log lines go (by default standard error, standard output or an
    ///     appended file, as configured).
    ///   - drainTimeout: how long the bus may take to deliver what is queued at shutdown.
    ///   - clock: the clock schedules and `run(for:)` are measured on (a manual one in tests).
    ///   - now: the wall-clock time, to turn rate-limit reset dates into pauses; the embedded
    ///     sandbox's timeline and todos grow on it too (a fixed date in tests).
    ///   - postFaultHook: called at the post schedulers' fault points (crash tests stop the
    ///     process there).
    public init<C: Clock>(configuration: HeraldConfiguration, makeWriter: WriterFactory? = nil, drainTimeout: Duration = .seconds(3),
                          clock: C, now: @escaping @Sendable () -> Date = { Date() },
                          postFaultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)? = nil) where C.Duration == Duration {
        self.scheduler = { loaders, duration in await Self.runSchedules(loaders, for: duration, clock: clock, now: now) }
        self.postClock = clock
        self.now = now
        self.postFaultHook = postFaultHook
        self.configuration = configuration
        self.makeWriter = makeWriter ?? Self.standardWriters(relativeTo: configuration.directory)
        self.drainTimeout = drainTimeout
    }

    /// Creates a daemon on the continuous clock (see the other initialiser for the parameters).
    public init(configuration: HeraldConfiguration, makeWriter: WriterFactory? = nil, drainTimeout: Duration = .seconds(3),
                postFaultHook: (@Sendable (PostScheduler.FaultPoint) -> Void)? = nil) {
        self.init(configuration: configuration, makeWriter: makeWriter, drainTimeout: drainTimeout, clock: ContinuousClock(),
                  postFaultHook: postFaultHook)
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

    /// Runs until `duration` has passed (forever when nil) or the calling task is cancelled.
    ///
    /// - Parameter started: called once everything runs, before the first loads finish.
    /// - Throws: ``DaemonError`` when something cannot start (the sandbox's port, a log file).
    @discardableResult
    public func run(for duration: Duration? = nil, started: @Sendable (DaemonStarted) -> Void = { _ in }) async throws(DaemonError) -> DaemonStopped {
        var sandbox: Sandbox?
        if configuration.usesSandbox {
            do {
                var settings = ServiceDirectory.sandboxConfiguration(for: configuration)
                settings.now = now
                sandbox = try await Sandbox.start(settings)
            } catch {
                throw DaemonError("cannot start the sandbox: \(error)")
            }
        }
        let bus = EventBus(configuration: .init(firstSequence: Self.firstSequence(after: configuration)))
        var subscribers: [RunningSubscriber] = []
        do {
            try startSubscribers(on: bus, sandbox: sandbox, into: &subscribers)
            let loaders = try makeLoaders(bus: bus, sandbox: sandbox)
            started(DaemonStarted(sandboxURL: sandbox?.baseURL, loaders: loaders.map(\.0.id), subscribers: subscribers.map(\.name)))
            await runSchedules(loaders, for: duration)
            // Post schedulers stop before the drain, so their last events are archived; what
            // they have not sent stays in their outboxes.
            for subscriber in subscribers { await subscriber.stopBeforeDrain?() }
            let report = await bus.shutdown(timeout: drainTimeout)
            subscribers.forEach { $0.stop() }  // after the drain: file sinks sync and close
            await sandbox?.stop()
            return DaemonStopped(drained: report.drained, discarded: report.totalDiscarded)
        } catch {
            for subscriber in subscribers { await subscriber.stopBeforeDrain?() }
            _ = await bus.shutdown(timeout: .seconds(1))
            subscribers.forEach { $0.stop() }
            await sandbox?.stop()
            throw error
        }
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
            guard let archive = settings.archive else { continue }
            let path = ConfigLoader.resolve(archive.path, against: configuration.directory).path
            if let archived = try? ArchiveReader(path: path).lastSequence() { last = max(last, archived) }
        }
        return last == .max ? last : last + 1
    }

    /// Starts the subscribers into `subscribers` (so that the caller stops those started when
    /// a later one fails): post schedulers last, so that the posts they resume from their
    /// outboxes are seen by the log and archive subscribers.
    private func startSubscribers(on bus: EventBus, sandbox: Sandbox?, into subscribers: inout [RunningSubscriber]) throws(DaemonError) {
        let redactor = Redactor(secrets: configuration.secrets)
        let names = configuration.subscribers.keys.sorted()
        for name in names.filter({ configuration.subscribers[$0]?.posting == nil }) + names.filter({ configuration.subscribers[$0]?.posting != nil }) {
            guard let settings = configuration.subscribers[name] else { continue }
            if let posting = settings.posting {
                let scheduler = try makePostScheduler(name, posting, sandbox: sandbox)
                subscribers.append(RunningSubscriber(name: name, stop: {}, stopBeforeDrain: { await scheduler.stop() }))
                do {
                    try scheduler.start(on: bus)
                } catch {
                    throw DaemonError("subscribers.\(name): \(error)")
                }
                continue
            }
            if let archive = settings.archive {
                let sink = FileSink(
                    name: name, path: ConfigLoader.resolve(archive.path, against: configuration.directory).path,
                    patterns: settings.topics.map { TopicPattern(stringLiteral: $0) }, durability: archive.durability,
                    syncEvery: archive.syncEvery, rotation: archive.rotation)
                do {
                    try sink.start(on: bus)
                } catch {
                    throw DaemonError("subscribers.\(name): \(error)")
                }
                subscribers.append(RunningSubscriber(name: name, stop: { sink.stop() }))
                continue
            }
            let writer: any LogWriter
            do {
                writer = try makeWriter(settings.output)
            } catch {
                throw DaemonError("subscribers.\(name).output: cannot open: \(error.localizedDescription)")
            }
            let subscriber = LogSubscriber(
                name: "subscriber.\(name)", patterns: settings.topics.map { TopicPattern(stringLiteral: $0) },
                level: settings.level, format: settings.format, writer: writer,
                summarizers: [LoaderEventSummaries.summarizer], redactor: redactor)
            do {
                try subscriber.start(on: bus)
            } catch {
                throw DaemonError("subscribers.\(name): \(error)")
            }
            subscribers.append(RunningSubscriber(name: subscriber.name, stop: { subscriber.stop() }))
        }
    }

    private func makePostScheduler(_ name: String, _ posting: PostingSettings, sandbox: Sandbox?) throws(DaemonError) -> PostScheduler {
        let directory = ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport())
        var services: [String: any PostService] = [:]
        for service in Set(posting.rules.map(\.service)) {
            switch configuration.services[service] {
            case .twitter?: services[service] = TwitterPostService(client: try directory.twitter(service), baseDirectory: configuration.directory)
            case .baas?: services[service] = BaaSPostService(client: try directory.baas(service))
            default: throw DaemonError("subscribers.\(name): service \(service) cannot post")
            }
        }
        let outbox = posting.outbox.map { ConfigLoader.resolve($0, against: configuration.directory) }
            ?? configuration.stateDirectory.appendingPathComponent("outbox").appendingPathComponent("\(name).jsonl")
        return PostScheduler(name: name, rules: posting.rules, services: services, outboxPath: outbox.path, retry: posting.retry,
                             clock: postClock, now: now, faultHook: postFaultHook)
    }

    private func makeLoaders(bus: EventBus, sandbox: Sandbox?) throws(DaemonError) -> [(any Loader, SchedulePolicy)] {
        let services = ServiceDirectory(configuration: configuration, sandbox: sandbox, transport: SchemeRoutingTransport())
        let store = LoaderStateStore(directory: configuration.stateDirectory)
        var loaders: [(any Loader, SchedulePolicy)] = []
        for id in configuration.loaders.keys.sorted() {
            guard let settings = configuration.loaders[id] else { continue }
            let loader: any Loader
            switch settings.kind {
            case .timeline(let request):
                let client = try services.twitter(settings.service)
                loader = try Self.setUp(id) { () throws(LoaderSetupError) in
                    try TimelineLoader(id: id, client: client, request: request, bus: bus, stateStore: store)
                }
            case .tiqav(let request):
                let client = try services.tiqav(settings.service)
                loader = try Self.setUp(id) { () throws(LoaderSetupError) in
                    try TiqavLoader(id: id, client: client, request: request, bus: bus, stateStore: store)
                }
            case .todo(let bucket):
                let client = try services.baas(settings.service)
                loader = try Self.setUp(id) { () throws(LoaderSetupError) in
                    try TodoLoader(id: id, client: client, bucket: bucket, bus: bus, stateStore: store)
                }
            }
            loaders.append((loader, settings.schedule))
        }
        return loaders
    }

    private static func setUp(_ id: String, _ make: () throws(LoaderSetupError) -> any Loader) throws(DaemonError) -> any Loader {
        do {
            return try make()
        } catch {
            throw DaemonError("loaders.\(id): \(error)")
        }
    }

    private func runSchedules(_ loaders: [(any Loader, SchedulePolicy)], for duration: Duration?) async {
        await scheduler(loaders, duration)
    }

    private static func runSchedules<C: Clock>(_ loaders: [(any Loader, SchedulePolicy)], for duration: Duration?,
                                               clock: C, now: @escaping @Sendable () -> Date) async where C.Duration == Duration {
        await withTaskGroup(of: Void.self) { group in
            for (loader, policy) in loaders {
                let schedule = LoaderSchedule(policy: policy, clock: clock, seed: seed(loader.id), now: now) { await loader.load() }
                group.addTask { await schedule.run() }
            }
            // Sleeping until cancelled (or the duration) is how the run waits for its stop.
            try? await clock.sleep(for: duration ?? .seconds(10 * 365 * 86_400))
            group.cancelAll()
        }
    }

    /// A stable seed per loader, so jitter differs between loaders but not between runs.
    static func seed(_ id: String) -> UInt64 {
        id.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    }
}

/// A started subscriber, as the daemon stops it.
struct RunningSubscriber: Sendable {
    var name: String
    var stop: @Sendable () -> Void
    /// Stops it before the bus drains (post schedulers), if it needs to.
    var stopBeforeDrain: (@Sendable () async -> Void)? = nil
}
