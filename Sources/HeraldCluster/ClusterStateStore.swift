import Foundation
import HeraldLoaders
import HeraldSync

/// Loader states in the cluster's state bucket (key `loader.<id>`), so the node that takes a
/// loader over goes on from where the last holder stopped and announces nothing twice.
///
/// A save is refused (``LoaderStateStoreError``) unless this node holds the loader's lease at
/// that moment, after the post intents of the announcement are stored (see ``IntentLedger``),
/// and the key is still at the revision this node read or wrote last: a node that lost its
/// lease while a load ran never overwrites its successor's state.
///
/// Reads happen through ``fetch(_:)``, which throws when the bucket cannot be reached; the
/// leased loader fetches before it makes the loader, and ``load(_:)`` hands the loader that.
public final class ClusterStateStore: LoaderStateStorage {
    private let bucket: any ClusterKeyValue
    private let holds: @Sendable (String) -> Bool
    private let ledger: IntentLedger?
    private let fetched = SyncLock<[String: LoaderStateStore.ReadResult]>([:])
    private let revisions = SyncLock<[String: UInt64]>([:])

    /// A store on `bucket`; `holds(id)` says whether this node holds loader `id`'s lease now.
    public init(bucket: any ClusterKeyValue, ledger: IntentLedger? = nil, holds: @escaping @Sendable (String) -> Bool) {
        self.bucket = bucket
        self.ledger = ledger
        self.holds = holds
    }

    /// `bucket <name>`.
    public var location: String { "bucket \(bucket.name)" }

    static func key(_ id: String) -> String { "loader.\(id)" }

    /// Reads loader `id`'s state from the bucket and keeps it for the next ``load(_:)``. A value
    /// that is not a trustworthy state is reported as corrupt (and overwritten by the next save).
    ///
    /// - Throws: ``ClusterError`` when the bucket cannot be read.
    @discardableResult
    public func fetch(_ id: String) async throws(ClusterError) -> LoaderStateStore.ReadResult {
        let key = Self.key(id)
        let entry = try await bucket.get(key)
        revisions.withLock { $0[id] = entry?.revision }
        let result: LoaderStateStore.ReadResult
        if let entry {
            if let state = try? JSONDecoder().decode(LoaderState.self, from: Data(entry.value)) {
                result = state.problem.map { .corrupt(path: "\(location)/\(key)", movedTo: nil, reason: $0) } ?? .loaded(state)
            } else {
                result = .corrupt(path: "\(location)/\(key)", movedTo: nil, reason: "not a loader state")
            }
        } else {
            result = .missing
        }
        fetched.withLock { $0[id] = result }
        return result
    }

    /// What ``fetch(_:)`` read last, or a fresh read (a bucket that cannot be read then counts
    /// as a corrupt state: the loader starts afresh, reported).
    public func load(_ id: String) async -> LoaderStateStore.ReadResult {
        if let result = fetched.withLock({ $0.removeValue(forKey: id) }) { return result }
        do {
            return try await fetch(id)
        } catch {
            return .corrupt(path: "\(location)/\(Self.key(id))", movedTo: nil, reason: "it cannot be read: \(error.message)")
        }
    }

    /// Whether this node still holds loader `id`'s lease: a load that got its answer after the
    /// lease ended (the node was paused, or cut off from NATS) announces nothing.
    public func mayAnnounce(_ id: String) -> Bool { holds(id) }

    /// Saves loader `id`'s state, if this node still holds its lease.
    public func save(_ state: LoaderState, for id: String) async throws(LoaderStateStoreError) {
        let key = Self.key(id)
        let path = "\(location)/\(key)"
        guard holds(id) else { throw LoaderStateStoreError(operation: "save", path: path, reason: "this node no longer holds the loader's lease") }
        if let ledger {
            let held = await ledger.settle()
            guard held == 0 else {
                throw LoaderStateStoreError(operation: "save", path: path,
                                            reason: "\(held) post intent\(held == 1 ? " is" : "s are") held until the post queue takes \(held == 1 ? "it" : "them")")
            }
            guard holds(id) else { throw LoaderStateStoreError(operation: "save", path: path, reason: "this node no longer holds the loader's lease") }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(state) else {
            throw LoaderStateStoreError(operation: "encode the state for", path: path, reason: "it cannot be encoded")
        }
        let known = revisions.withLock { $0[id] }
        do {
            let revision = if let known {
                try await bucket.update(key, value: Array(data), expectedRevision: known)
            } else {
                try await bucket.create(key, value: Array(data))
            }
            revisions.withLock { $0[id] = revision }
        } catch {
            let reason = error.isWrongRevision || error.isKeyExists ? "another node saved the state since this one read it" : error.message
            throw LoaderStateStoreError(operation: "save", path: path, reason: reason)
        }
    }
}
