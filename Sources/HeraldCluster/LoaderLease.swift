import Foundation
import HeraldSync

/// One loader's lease in a key-value bucket whose keys expire after the lease's TTL: the node
/// that holds it runs the loader. ``refresh()`` creates the key when it is absent and renews it
/// with the expected revision when held; ``LeaseMachine`` decides what each answer means.
///
/// The key is `loader.<id>`; the value names the holder (`{"loader":"home","node":"a"}`), so a
/// node that cannot take the lease can say who holds it.
public final class LoaderLease<C: Clock>: Sendable where C.Duration == Duration {
    /// The loader's id.
    public let loader: String
    /// This node's name.
    public let node: String
    /// The key in the bucket.
    public var key: String { "loader.\(loader)" }
    private let bucket: any ClusterKeyValue
    private let clock: C
    private let machine: SyncLock<LeaseMachine<C.Instant>>

    /// A free lease for `loader` held by `node` for `ttl` per write; `bucket`'s keys must
    /// expire after `ttl` too.
    public init(loader: String, node: String, ttl: Duration, bucket: any ClusterKeyValue, clock: C) {
        self.loader = loader
        self.node = node
        self.bucket = bucket
        self.clock = clock
        self.machine = SyncLock(LeaseMachine(ttl: ttl))
    }

    /// The lease's TTL.
    public var ttl: Duration { machine.withLock { $0.ttl } }

    /// Whether this node holds the lease now.
    public var isHeld: Bool {
        let now = clock.now
        return machine.withLock { $0.isHeld(at: now) }
    }

    /// How long it is still held (zero when not).
    public var remaining: Duration {
        let now = clock.now
        return machine.withLock { $0.remaining(at: now) }
    }

    /// The node that held the lease when this one last failed to take it.
    public var lastHolder: String? {
        if case .free(let holder) = machine.withLock({ $0.state }) { return holder }
        return nil
    }

    /// Creates or renews the lease once; what that changed.
    public func refresh() async -> LeaseMachine<C.Instant>.Change {
        let step = machine.withLock { $0.next }
        let sentAt = clock.now
        let value = LeaseValue(loader: loader, node: node).encoded
        do {
            let revision = switch step {
            case .create: try await bucket.create(key, value: value)
            case .update(let revision): try await bucket.update(key, value: value, expectedRevision: revision)
            }
            return machine.withLock { $0.written(revision: revision, sentAt: sentAt) }
        } catch {
            if error.isKeyExists {
                let holder = try? await bucket.get(key).flatMap { Self.holder(in: $0.value) }
                return machine.withLock { $0.heldElsewhere(by: holder) }
            }
            if error.isWrongRevision { return machine.withLock { $0.revisionMismatch() } }
            let now = clock.now
            return machine.withLock { $0.failed(error.message, at: now) }
        }
    }

    /// Gives the lease back (deletes the key at the revision written last), so another node
    /// takes the loader at its next refresh instead of after the TTL. Best effort: when the
    /// delete fails, the key expires.
    public func release() async {
        let step = machine.withLock { machine -> LeaseMachine<C.Instant>.Step? in
            defer { _ = machine.release() }
            return machine.isHeld(at: clock.now) ? machine.next : nil
        }
        guard case .update(let revision)? = step else { return }
        try? await bucket.delete(key, expectedRevision: revision)
    }

    /// The `node` named in a lease's value.
    static func holder(in value: [UInt8]) -> String? {
        LeaseValue(decoding: value)?.node
    }
}

/// A lease's value in the bucket: `{"loader":"home","node":"a"}` (keys sorted, slashes not
/// escaped: the bytes every Herald version wrote, so a node of any version reads it).
struct LeaseValue: Codable, Hashable, Sendable {
    /// The loader.
    var loader: String
    /// The node that holds the lease.
    var node: String

    /// The value's bytes.
    var encoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Two strings always encode.
        return (try? encoder.encode(self)).map(Array.init) ?? []
    }

    /// The value in `bytes`; nil when they are not a lease's value.
    init?(decoding bytes: [UInt8]) {
        guard let value = try? JSONDecoder().decode(Self.self, from: Data(bytes)) else { return nil }
        self = value
    }

    /// A value.
    init(loader: String, node: String) {
        self.loader = loader
        self.node = node
    }
}
