/// The key-value operations leases, loader states and post records need: a JetStream bucket in
/// a cluster, ``InMemoryKeyValue`` in tests.
///
/// An implementation must guarantee compare-and-set semantics per key: ``create(_:value:)``
/// succeeds for exactly one of several concurrent callers while the key is absent (or expired
/// or deleted), and ``update(_:value:expectedRevision:)`` only while `expectedRevision` is the
/// key's last revision. Revisions grow with every write to the bucket.
public protocol ClusterKeyValue: Sendable {
    /// The bucket's name, for reports.
    var name: String { get }
    /// The key's last value and revision; nil when absent, expired or deleted.
    func get(_ key: String) async throws(ClusterError) -> ClusterKeyValueEntry?
    /// Writes `value` if the key is absent; its revision.
    ///
    /// - Throws: ``ClusterError/keyExists(_:)`` when it is present.
    func create(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64
    /// Writes `value` if the key's last revision is `expectedRevision`; the new revision.
    ///
    /// - Throws: ``ClusterError/wrongRevision(_:expected:)`` otherwise.
    func update(_ key: String, value: [UInt8], expectedRevision: UInt64) async throws(ClusterError) -> UInt64
    /// Deletes the key if its last revision is `expectedRevision` (a lease given back).
    func delete(_ key: String, expectedRevision: UInt64) async throws(ClusterError)
}

/// A key's value and revision.
public struct ClusterKeyValueEntry: Sendable, Hashable {
    /// The bytes stored.
    public var value: [UInt8]
    /// The revision (the bucket stream's sequence of the write).
    public var revision: UInt64

    /// An entry.
    public init(value: [UInt8], revision: UInt64) {
        self.value = value
        self.revision = revision
    }
}

extension ClusterKeyValue {
    /// Writes `value` whatever the key holds: an update of the last revision, or a create.
    /// Retries a few times when another writer gets in between.
    public func put(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64 {
        var lastError = ClusterError.unavailable("key \(key) changed under every write")
        for _ in 0..<5 {
            do {
                if let entry = try await get(key) {
                    return try await update(key, value: value, expectedRevision: entry.revision)
                }
                return try await create(key, value: value)
            } catch where error.isKeyExists || error.isWrongRevision {
                lastError = error
            }
        }
        throw lastError
    }
}
