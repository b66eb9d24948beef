import Herald
import HeraldLifecycle
import HeraldLoaders

/// One loader in a cluster, as a service: it runs the loader's schedule only while this node
/// holds the loader's lease, with the loader's state in the cluster's state bucket.
///
/// Every third of the lease's TTL it creates or renews the lease. When it takes the lease it
/// reads the state (``ClusterStateStore/fetch(_:)``; until that succeeds nothing is loaded),
/// makes a fresh loader on it and starts the schedule; when it loses the lease it cancels the
/// schedule (a load in flight is cancelled, and the store refuses any save from then on). A
/// load starts only while at least a third of the TTL remains. Each change is published as
/// ``ClusterLeaseChanged``. When the service stops it gives the lease back, so another node
/// takes the loader at its next refresh rather than after the TTL.
///
/// The schedule runs as a child task of ``run()`` (beside the lease's renewal), never as a task
/// of its own: an error it throws ends the service and reaches the group.
public struct LeasedLoaderService<C: Clock>: Service where C.Duration == Duration {
    /// Makes the loader on the state storage it must use.
    public typealias MakeLoader = @Sendable (any LoaderStateStorage) throws -> any Loader
    /// Makes the schedule that runs a load.
    public typealias MakeSchedule = @Sendable (@escaping @Sendable () async -> LoadOutcome) -> any Service

    /// The lease.
    public let lease: LoaderLease<C>
    private let store: ClusterStateStore
    private let bus: EventBus
    private let clock: C
    private let makeLoader: MakeLoader
    private let makeSchedule: MakeSchedule

    /// A leased loader.
    ///
    /// - Parameters:
    ///   - states: the state bucket.
    ///   - ledger: the post intents the state saves wait for.
    public init(lease: LoaderLease<C>, states: any ClusterKeyValue, ledger: IntentLedger?, bus: EventBus, clock: C,
                makeLoader: @escaping MakeLoader, makeSchedule: @escaping MakeSchedule) {
        self.lease = lease
        self.store = ClusterStateStore(bucket: states, ledger: ledger, holds: { [lease] _ in lease.isHeld })
        self.bus = bus
        self.clock = clock
        self.makeLoader = makeLoader
        self.makeSchedule = makeSchedule
    }

    /// Refreshes the lease and runs the schedule while it is held, until shut down.
    public func run() async throws {
        announceStarted()
        var failure: (any Error)?
        do {
            try await cancelWhenGracefulShutdown {
                try await waitUntilGroupStarted()
                try await self.loop()
            }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        // Not in the cancelled task: the delete must still be sent.
        await Task { [lease] in await lease.release() }.value
        if let failure { throw failure }
    }

    private func loop() async throws {
        let pause = lease.ttl / 3
        while true {
            try Task.checkCancellation()
            await publish(await lease.refresh())
            if lease.isHeld, (try? await store.fetch(lease.loader)) != nil {
                let loader = try makeLoader(store)
                let schedule = makeSchedule { [lease] in
                    // Too close to the lease's end to finish before another node may take it.
                    guard lease.remaining > lease.ttl / 3 else { return .finished(items: 0, new: 0) }
                    return await loader.load()
                }
                try await runWhileHeld(schedule, pause: pause)
            }
            try await clock.sleep(for: pause)
        }
    }

    /// Runs `schedule` as a child task while the lease is held, beside a child that renews the
    /// lease every `pause`. When the lease is lost the schedule is cancelled (a load in flight
    /// with it), and the loss is published once it has ended. An error either child throws ends
    /// both and is thrown here, so it reaches the group; a schedule that returns on its own
    /// leaves the lease held (renewed) until it is lost.
    private func runWhileHeld(_ schedule: any Service, pause: Duration) async throws {
        let lost = try await withThrowingTaskGroup(of: String?.self) { group -> String? in
            group.addTask {
                try await schedule.run()
                return nil
            }
            group.addTask { try await holdLease(pause: pause) }
            while let ended = try await group.next() {
                guard let reason = ended else { continue }
                group.cancelAll()
                return reason
            }
            return nil
        }
        if let lost { await publish(.lost(lost)) }
    }

    /// Renews the lease every `pause` while it is held; returns why it was lost.
    private func holdLease(pause: Duration) async throws -> String {
        while true {
            try await clock.sleep(for: pause)
            switch await lease.refresh() {
            case .lost(let reason): return reason
            case let change: await publish(change)
            }
        }
    }

    /// Publishes a change of the lease as ``ClusterLeaseChanged``.
    private func publish(_ change: LeaseMachine<C.Instant>.Change) async {
        let sender = Sender("cluster")
        switch change {
        case .acquired:
            _ = try? await bus.publish(ClusterLeaseChanged(loader: lease.loader, node: lease.node, change: .acquired), from: sender)
        case .lost(let reason):
            _ = try? await bus.publish(ClusterLeaseChanged(loader: lease.loader, node: lease.node, change: .lost, reason: reason),
                                       from: sender)
        case .none:
            break
        }
    }
}
