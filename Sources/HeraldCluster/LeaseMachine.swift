/// The decisions of one loader's lease, apart from the bucket and the clock: whether to create
/// or renew next, and what each answer means.
///
/// The lease is held from a successful write until `ttl` after the write was *sent*, on this
/// node's clock: the bucket expires it `ttl` after it *stored* it, later still, so no other node
/// can create it while this one counts it held (clocks measure durations alike; no wall-clock
/// agreement is needed). A renewal refused for its revision means the lease expired and another
/// node took it: lost at once. A renewal that fails for any other reason (the server is
/// unreachable) keeps the lease until its time runs out, then loses it.
public struct LeaseMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Whether this node holds the lease.
    public enum State: Sendable, Equatable {
        /// Not held; `holder` is the node that held it at the last look, if known.
        case free(holder: String?)
        /// Held at `revision` until `until`.
        case held(revision: UInt64, until: Instant)
    }

    /// The write to make next.
    public enum Step: Sendable, Equatable {
        /// Create the key (held by nobody, as far as this node knows).
        case create
        /// Renew it at the revision written last.
        case update(revision: UInt64)
    }

    /// What an answer changed.
    public enum Change: Sendable, Equatable {
        /// Nothing: still free, or still held.
        case none
        /// This node now holds the lease.
        case acquired
        /// This node no longer holds it, and why.
        case lost(String)
    }

    /// How long a write holds the lease.
    public let ttl: Duration
    /// The state.
    public private(set) var state: State = .free(holder: nil)

    /// A free lease lasting `ttl` per write.
    public init(ttl: Duration) {
        self.ttl = ttl
    }

    /// The write to make next.
    public var next: Step {
        switch state {
        case .free: .create
        case .held(let revision, _): .update(revision: revision)
        }
    }

    /// Whether the lease is held at `now`.
    public func isHeld(at now: Instant) -> Bool {
        if case .held(_, let until) = state { return now < until }
        return false
    }

    /// How long the lease is still held at `now` (zero when free).
    public func remaining(at now: Instant) -> Duration {
        guard case .held(_, let until) = state, now < until else { return .zero }
        return now.duration(to: until)
    }

    /// The write sent at `sentAt` succeeded at `revision`.
    public mutating func written(revision: UInt64, sentAt: Instant) -> Change {
        let wasHeld = if case .held = state { true } else { false }
        state = .held(revision: revision, until: sentAt.advanced(by: ttl))
        return wasHeld ? .none : .acquired
    }

    /// A create found the lease held by `holder`.
    public mutating func heldElsewhere(by holder: String?) -> Change {
        state = .free(holder: holder)
        return .none
    }

    /// A renewal was refused for its revision: the lease expired and was taken, or deleted.
    public mutating func revisionMismatch() -> Change {
        guard case .held = state else { return .none }
        state = .free(holder: nil)
        return .lost("the lease changed in the bucket (it expired and another node may hold it)")
    }

    /// A write failed for `reason` (no answer, a server error); at `now` the lease may have run out.
    public mutating func failed(_ reason: String, at now: Instant) -> Change {
        guard case .held(_, let until) = state, until <= now else { return .none }
        state = .free(holder: nil)
        return .lost("not renewed within the lease's TTL: \(reason)")
    }

    /// The lease was given back (deleted) or this node stops counting it held.
    public mutating func release() -> Change {
        guard case .held = state else { return .none }
        state = .free(holder: nil)
        return .lost("released")
    }
}
