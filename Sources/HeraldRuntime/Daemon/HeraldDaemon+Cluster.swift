import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldLoaders
import HeraldStatus
import HeraldSubscribers

extension HeraldDaemon {
    /// The members after the log and archive subscribers for a node of a cluster: the
    /// connection, the exporter (stopped after the drain, so it publishes what the drain
    /// delivers), the drain, the importer, the post intakes and the one post worker, and the
    /// leased loaders. Every one of them waits on `clock`, the daemon's injected clock.
    func clusterMembers<C: Clock>(_ cluster: ClusterSettings, bus: EventBus, drain: BusDrainService, sandbox: SandboxService?,
                                  sources: StatusSources, clock: C) -> [ServiceGroup.Member] where C.Duration == Duration {
        let connection = ClusterConnectionService(settings: cluster, connector: clusterConnector, bus: bus, clock: clock)
        let ledger = IntentLedger()
        let backend: @Sendable () throws(DaemonError) -> any ClusterBackend = { () throws(DaemonError) -> any ClusterBackend in
            guard let backend = connection.backend else { throw DaemonError("cluster: not connected") }
            return backend
        }
        sources.addReadinessCheck { connection.notConnectedReason }
        var members: [ServiceGroup.Member] = [.init("cluster.connection", connection)]
        members.append(.init("cluster.export", DeferredService {
            EventExporter(bus: bus, publisher: try backend().publisher, node: cluster.node,
                          patterns: cluster.export.map { TopicPattern(stringLiteral: $0) }, clock: clock)
        }))
        members.append(.init("bus", drain))
        members.append(.init("cluster.import", DeferredService {
            EventImporter(bus: bus, consumer: try backend().imports, node: cluster.node, clock: clock)
        }))
        var rules: [PostRule] = []
        var retry = PostScheduler.RetryPolicy()
        // Checked when the intakes and the worker start: the config requires the secret with post rules.
        let authenticator: @Sendable () throws(DaemonError) -> IntentAuthenticator = { () throws(DaemonError) -> IntentAuthenticator in
            guard let secret = cluster.intentSecret else { throw DaemonError("cluster.intentSecret: required with post rules") }
            do {
                return try IntentAuthenticator(secret: secret)
            } catch {
                throw DaemonError("cluster.intentSecret: \(error)")
            }
        }
        for name in configuration.subscribers.keys.sorted() {
            guard case .post(let posting)? = configuration.subscribers[name] else { continue }
            rules += posting.rules
            retry = posting.retry
            members.append(.init("subscribers.\(name)", DeferredService { [now] in
                ClusterPostIntake(name: name, rules: posting.rules, bus: bus, publisher: try backend().publisher, queueName: cluster.postStream,
                                  ledger: ledger, node: cluster.node, authenticator: try authenticator(), retry: posting.retry,
                                  clock: clock, now: now)
            }))
        }
        if !rules.isEmpty {
            members.append(.init("cluster.posts", DeferredService { [self, rules, retry] in
                var services: [String: any PostService] = [:]
                for name in configuration.subscribers.keys.sorted() {
                    guard case .post(let posting)? = configuration.subscribers[name] else { continue }
                    let media: MediaAccess = cluster.mediaDirectory.map { .within($0) } ?? MediaAccess.none
                    services.merge(try postServices(name, posting.rules, sandbox: sandbox?.sandbox, media: media)) { first, _ in first }
                }
                let backend = try backend()
                return ClusterPostWorker(name: "posts", rules: rules, services: services, consumer: backend.intents, records: backend.states,
                                         bus: bus, node: cluster.node, authenticator: try authenticator(), retry: retry,
                                         ackWait: cluster.ackWait, clock: clock, now: now)
            }))
        }
        for id in configuration.loaders.keys.sorted() {
            guard let settings = configuration.loaders[id] else { continue }
            let monitor = ScheduleMonitor()
            sources.add(StatusSources.Loader(id: id, kind: settings.kind.name, monitor: monitor))
            members.append(.init("loaders.\(id)", DeferredService { [self] in
                let backend = try backend()
                let lease = LoaderLease(loader: id, node: cluster.node, ttl: cluster.leaseTTL, bucket: backend.leases, clock: clock)
                return LeasedLoaderService(
                    lease: lease, states: backend.states, ledger: ledger, bus: bus, clock: clock,
                    makeLoader: { [self] storage in try makeLoader(id, settings, bus: bus, store: storage, sandbox: sandbox?.sandbox) },
                    makeSchedule: { [self] load in makeSchedule(settings.schedule, Self.seed(id), monitor, load) })
            }))
        }
        return members
    }
}
