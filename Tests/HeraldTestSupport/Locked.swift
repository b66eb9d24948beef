import HeraldSync

/// A value behind the one lock (`SyncLock`, which the thread sanitizer sees), as a reference a
/// test can capture in closures and share between tasks and threads: `SyncLock` itself cannot
/// be copied into an escaping closure.
public final class Locked<Value>: Sendable {
    private let lock: SyncLock<Value>

    /// A lock around `value`.
    public init(_ value: consuming sending Value) {
        lock = SyncLock(value)
    }

    /// Runs `body` with the value, holding the lock. Never call it again from inside `body`.
    public func withLock<Result, Failure: Error>(_ body: (inout sending Value) throws(Failure) -> sending Result) throws(Failure) -> sending Result {
        try lock.withLock(body)
    }
}
