import HeraldSync

/// A value guarded by a bus's lock rather than a lock of its own: the mailboxes' state, so that
/// a publish holding the bus lock can append to them without another lock.
@usableFromInline
struct BusLocked<Value> {
    /// Unowned: every user of a mailbox holds its bus core (routes, consumer tasks, streams and
    /// shutdown all reach the mailbox through the core), and the core owns the mailbox through
    /// its records, so a strong reference would be a cycle.
    @usableFromInline unowned(unsafe) let core: BusCore
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    init(_ value: Value, core: BusCore) {
        self.core = core
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    /// Frees the storage; once, from the owner's deinit.
    func destroy() {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the value, holding the bus lock.
    @inlinable
    func withLock<Result>(_ body: (inout Value) -> sending Result) -> sending Result {
        core.state.withLock { _ in body(&storage.pointee) }
    }

    /// Runs `body` with the value if the bus lock is free now; nil, without waiting, if not.
    @inlinable
    func withLockIfAvailable<Result>(_ body: (inout Value) -> sending Result) -> sending Result? {
        core.state.withLockIfAvailable { _ in body(&storage.pointee) }
    }

    /// Runs `body` with the value; the caller holds the bus lock.
    @inlinable
    func withLockHeld<Result>(_ body: (inout Value) -> Result) -> Result {
        body(&storage.pointee)
    }
}
