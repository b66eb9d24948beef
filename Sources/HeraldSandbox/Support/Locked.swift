import Foundation

/// A value guarded by a lock: the sandbox's shared state lives in these.
///
/// `@unchecked Sendable` is safe: `value` is only reached inside `withLock`, which holds
/// `lock` for the whole access, and `Value` is itself `Sendable` so nothing escapes unguarded.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
