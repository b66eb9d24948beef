import HeraldSync

/// Whether the node's cluster work gets answers: per kind of operation, whether the last one
/// was answered. The connection service's readiness reads it, so `/readyz` follows what the
/// node can do (a lease renewal or a pull that got no answer counts), not only whether its
/// socket is open: a frozen server keeps the socket open for as long as the pings allow.
///
/// Only work that repeats on its own is tracked, so a mark cannot outlive the problem: the
/// exporter's and the post intakes' publishes (retried until stored), the importer's and the
/// post worker's pulls (every second or so), the leases (renewed every third of the TTL). Loader
/// states are not: a failed save may be the last for a long time, and the store reports it itself.
final class ClusterHealth: Sendable {
    /// A kind of cluster operation.
    enum Area: String, Sendable, CaseIterable {
        case leases = "renewing a lease"
        case publishes = "publishing"
        case imports = "pulling other nodes' events"
        case intents = "pulling post intents"
    }

    private let failing = SyncLock<[Area: String]>([:])

    /// Records how an operation of `area` ended: without an answer (no server, no reply in
    /// time) marks the area; any answer, a refusal included, clears it. A cancelled operation
    /// says nothing.
    func record(_ area: Area, _ error: ClusterError?) {
        if let error, error.isCancelled { return }
        let message = error.flatMap { $0.isUnavailable ? $0.message : nil }
        failing.withLock { $0[area] = message }
    }

    /// Why the node cannot do its cluster work now, or nil.
    var problem: String? {
        let marks = failing.withLock { $0 }
        guard let area = Area.allCases.first(where: { marks[$0] != nil }), let message = marks[area] else { return nil }
        return "the cluster did not answer while \(area.rawValue): \(message)"
    }

    /// `backend` with its publisher, consumers and lease bucket reporting here.
    func tracking(_ backend: any ClusterBackend) -> any ClusterBackend {
        TrackedBackend(base: backend, health: self)
    }
}

/// A backend whose operations report to a ``ClusterHealth``.
private struct TrackedBackend: ClusterBackend {
    let base: any ClusterBackend
    let publisher: any ClusterStreamPublisher
    let imports: any ClusterPullConsumer
    let intents: any ClusterPullConsumer
    let leases: any ClusterKeyValue

    init(base: any ClusterBackend, health: ClusterHealth) {
        self.base = base
        publisher = TrackedPublisher(base: base.publisher, health: health)
        imports = TrackedConsumer(base: base.imports, area: .imports, health: health)
        intents = TrackedConsumer(base: base.intents, area: .intents, health: health)
        leases = TrackedKeyValue(base: base.leases, area: .leases, health: health)
    }

    var states: any ClusterKeyValue { base.states }
    var reports: any AsyncSequence<ClusterConnectionChanged, Never> & Sendable { base.reports }
    func close() async { await base.close() }
}

private struct TrackedPublisher: ClusterStreamPublisher {
    let base: any ClusterStreamPublisher
    let health: ClusterHealth

    func publish(_ messages: [ClusterMessage]) async -> [Result<ClusterPublishAck, ClusterError>] {
        let results = await base.publish(messages)
        var unanswered: ClusterError?
        var answered = false
        for result in results {
            switch result {
            case .success: answered = true
            case .failure(let error) where error.isUnavailable: unanswered = unanswered ?? error
            case .failure(let error) where !error.isCancelled: answered = true
            case .failure: break
            }
        }
        if let unanswered {
            health.record(.publishes, unanswered)
        } else if answered {
            health.record(.publishes, nil)
        }
        return results
    }
}

private struct TrackedConsumer: ClusterPullConsumer {
    let base: any ClusterPullConsumer
    let area: ClusterHealth.Area
    let health: ClusterHealth

    func fetch(batch: Int, wait: Duration) async throws(ClusterError) -> [ClusterDelivery] {
        do {
            let deliveries = try await base.fetch(batch: batch, wait: wait)
            health.record(area, nil)
            return deliveries
        } catch {
            health.record(area, error)
            throw error
        }
    }
}

private struct TrackedKeyValue: ClusterKeyValue {
    let base: any ClusterKeyValue
    let area: ClusterHealth.Area
    let health: ClusterHealth

    var name: String { base.name }

    private func tracked<T>(_ operation: () async throws(ClusterError) -> T) async throws(ClusterError) -> T {
        do {
            let value = try await operation()
            health.record(area, nil)
            return value
        } catch {
            health.record(area, error)
            throw error
        }
    }

    func get(_ key: String) async throws(ClusterError) -> ClusterKeyValueEntry? {
        try await tracked { () async throws(ClusterError) in try await base.get(key) }
    }

    func create(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64 {
        try await tracked { () async throws(ClusterError) in try await base.create(key, value: value) }
    }

    func update(_ key: String, value: [UInt8], expectedRevision: UInt64) async throws(ClusterError) -> UInt64 {
        try await tracked { () async throws(ClusterError) in try await base.update(key, value: value, expectedRevision: expectedRevision) }
    }

    func delete(_ key: String, expectedRevision: UInt64) async throws(ClusterError) {
        try await tracked { () async throws(ClusterError) in try await base.delete(key, expectedRevision: expectedRevision) }
    }
}
