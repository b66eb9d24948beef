import Synchronization

/// `Mutex`, made visible to the thread sanitizer: the one lock of every Herald module.
///
/// On Linux, `Synchronization.Mutex` hands a contended lock over inside the prebuilt standard
/// library, which the thread sanitizer does not see, so it reports the accesses the lock
/// protects as races (a two-thread `withLock` counter shows it). Every critical section here
/// also acquires and releases a private atomic, which gives the sanitizer the happens-before
/// edge the lock already guarantees. On x86 and ARM both are plain loads and stores.
public struct SyncLock<Value>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>
    @usableFromInline let fence = Atomic<UInt8>(0)

    /// A lock around `value`.
    @inlinable
    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value, holding the lock. Never call it again from inside `body`.
    @inlinable
    public borrowing func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
            _ = fence.load(ordering: .acquiring)
            defer { fence.store(1, ordering: .releasing) }
            return try body(&value)
        }
    }

    /// Runs `body` with the value if the lock is free now; nil, without waiting, if it is held.
    @inlinable
    public borrowing func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result? {
        try mutex.withLockIfAvailable { (value: inout sending Value) throws(Failure) -> sending Result in
            _ = fence.load(ordering: .acquiring)
            defer { fence.store(1, ordering: .releasing) }
            return try body(&value)
        }
    }
}
