import Dispatch
import Foundation
import Herald

import Synchronization
import Testing
import HeraldSync

// MARK: Events used by the tests

struct LoadFinished: Event, Equatable {
    var loader: String
    var count: Int
    var topic: Topic { (try? Topic(tokens: "loader", loader, "finished")) ?? "invalid topic" }
}

struct LoadFailed: Event, Equatable {
    var loader: String
    var reason: String
    var topic: Topic { (try? Topic(tokens: "loader", loader, "failed")) ?? "invalid topic" }
}

struct Tick: Event, Equatable {
    static let topic: Topic = "test.tick"
    var topic: Topic { Self.topic }
    var publisher: Int = 0
    var number: Int
}

struct Note: Event, Equatable {
    var topic: Topic
    var text: String = ""
}

struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

// MARK: Recording and waiting

/// A value behind an `NSLock`. The tests use it rather than `Synchronization.Mutex`, whose
/// contended hand-over on Linux is invisible to the thread sanitizer (false race reports).
/// `@unchecked Sendable`: `value` is only touched while holding `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A thread-safe list that tests can await: `await recorder.waitFor(count: 3)`.
final class Recorder<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }
    private let state = Locked(State())

    init() {}

    func append(_ value: Value) {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.values.append(value)
            let count = s.values.count
            let ready = s.waiters.filter { $0.count <= count }.map(\.continuation)
            s.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    var values: [Value] { state.withLock { $0.values } }
    var count: Int { state.withLock { $0.values.count } }

    /// Waits until at least `count` values arrived; false if `timeout` seconds passed first
    /// (a bound against hangs, generous enough for a machine busy with other work or a
    /// sanitizer; never a pacing sleep).
    @discardableResult
    func waitFor(count: Int, timeout: Double = 300) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.values.count >= count { return true }
                s.waiters.append((count, continuation))
                return false
            }
            if ready {
                continuation.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let timedOut = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                    guard let index = s.waiters.firstIndex(where: { $0.count == count }) else { return nil }
                    return s.waiters.remove(at: index).continuation
                }
                timedOut?.resume(returning: false)
            }
        }
    }
}

/// A settable wall clock for envelope timestamps and retention.
final class TestDate: Sendable {
    private let date = SyncLock(Date(timeIntervalSince1970: 1_700_000_000))
    var now: Date { date.withLock { $0 } }
    func advance(by seconds: Double) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
