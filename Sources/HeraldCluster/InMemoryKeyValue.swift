import HeraldSync

/// A ``ClusterKeyValue`` in memory, with an optional TTL measured on any clock: the tests' stand-in
/// for a JetStream bucket, with the same compare-and-set rules. Shipped so users can test their
/// own cluster code without a server.
///
/// A key written more than `ttl` ago (on the clock) reads as absent, and a create succeeds.
/// ``failNext(_:)`` makes the next operations throw, as an unreachable server would.
public final class InMemoryKeyValue<C: Clock>: ClusterKeyValue where C.Duration == Duration {
    private struct Stored {
        var value: [UInt8]
        var revision: UInt64
        var written: C.Instant
    }

    private struct State {
        var entries: [String: Stored] = [:]
        var revision: UInt64 = 0
        var failures: [ClusterError] = []
    }

    /// The bucket's name.
    public let name: String
    private let ttl: Duration?
    private let clock: C
    private let state = SyncLock(State())

    /// A bucket whose keys expire `ttl` after their last write (never when nil).
    public init(name: String = "memory", ttl: Duration? = nil, clock: C) {
        self.name = name
        self.ttl = ttl
        self.clock = clock
    }

    /// Makes the next operations throw these errors, one each, before any is carried out.
    public func failNext(_ errors: ClusterError...) {
        state.withLock { $0.failures += errors }
    }

    /// Every live key and its revision.
    public var snapshot: [String: ClusterKeyValueEntry] {
        let now = clock.now
        return state.withLock { state in
            state.entries.compactMapValues { live($0, now: now) ? ClusterKeyValueEntry(value: $0.value, revision: $0.revision) : nil }
        }
    }

    private func live(_ stored: Stored, now: C.Instant) -> Bool {
        guard let ttl else { return true }
        return stored.written.advanced(by: ttl) > now
    }

    private func operate<T>(_ body: (inout State, C.Instant) throws(ClusterError) -> T) throws(ClusterError) -> T {
        let now = clock.now
        return try state.withLock { (state: inout State) throws(ClusterError) -> T in
            if !state.failures.isEmpty { throw state.failures.removeFirst() }
            for (key, stored) in state.entries where !live(stored, now: now) { state.entries[key] = nil }
            return try body(&state, now)
        }
    }

    /// The key's value, unless absent or expired.
    public func get(_ key: String) async throws(ClusterError) -> ClusterKeyValueEntry? {
        try operate { state, _ in state.entries[key].map { ClusterKeyValueEntry(value: $0.value, revision: $0.revision) } }
    }

    /// Writes the key if absent or expired.
    public func create(_ key: String, value: [UInt8]) async throws(ClusterError) -> UInt64 {
        try operate { (state: inout State, now: C.Instant) throws(ClusterError) -> UInt64 in
            guard state.entries[key] == nil else { throw .keyExists(key) }
            state.revision += 1
            state.entries[key] = Stored(value: value, revision: state.revision, written: now)
            return state.revision
        }
    }

    /// Writes the key if its last revision is `expectedRevision`.
    public func update(_ key: String, value: [UInt8], expectedRevision: UInt64) async throws(ClusterError) -> UInt64 {
        try operate { (state: inout State, now: C.Instant) throws(ClusterError) -> UInt64 in
            guard state.entries[key]?.revision == expectedRevision else { throw .wrongRevision(key, expected: expectedRevision) }
            state.revision += 1
            state.entries[key] = Stored(value: value, revision: state.revision, written: now)
            return state.revision
        }
    }

    /// Deletes the key if its last revision is `expectedRevision`.
    public func delete(_ key: String, expectedRevision: UInt64) async throws(ClusterError) {
        try operate { (state: inout State, _: C.Instant) throws(ClusterError) in
            guard state.entries[key]?.revision == expectedRevision else { throw .wrongRevision(key, expected: expectedRevision) }
            state.revision += 1
            state.entries[key] = nil
        }
    }
}
