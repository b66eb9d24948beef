import HeraldSync

/// Values recorded from any number of tasks or threads, in order, and a wait for a condition
/// on them: a test awaits what it expects instead of sleeping.
///
/// ```swift
/// let received = Recording<Int>()
/// let token = try bus.subscribe(to: Tick.self) { received.append($0.number) }
/// try bus.post(Tick(number: 1))
/// #expect(await received.wait { $0 == [1] })
/// ```
///
/// A wait gives up after its `timeout` (five minutes unless given) and returns false, so a test
/// whose condition never holds fails instead of hanging; the timeout is a guard, never a pace.
public final class Recording<Value: Sendable>: Sendable {
    private struct Waiter {
        var condition: @Sendable ([Value]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var values: [Value] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = SyncLock(State())

    /// An empty recording.
    public init() {}

    /// What was recorded so far, in order.
    public var values: [Value] { state.withLock { $0.values } }

    /// How many values were recorded.
    public var count: Int { state.withLock { $0.values.count } }

    /// Records `value` and wakes the waits whose condition now holds.
    public func append(_ value: Value) {
        let ready = state.withLock { state -> [Waiter] in
            state.values.append(value)
            let values = state.values
            let done = state.waiters.filter { $0.value.condition(values) }
            for id in done.keys { state.waiters[id] = nil }
            return Array(done.values)
        }
        for waiter in ready {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// Suspends until `condition` holds on the values; false when `timeout` passed first.
    @discardableResult
    public func wait(timeout: Duration = .seconds(300), until condition: @escaping @Sendable ([Value]) -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> UInt64? in
                if condition(state.values) { return nil }
                state.nextID += 1
                state.waiters[state.nextID] = Waiter(condition: condition, continuation: continuation, timer: nil)
                return state.nextID
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            let timer = Task { [weak self] in
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self?.expire(id)
            }
            let stillWaiting = state.withLock { state -> Bool in
                guard state.waiters[id] != nil else { return false }
                state.waiters[id]?.timer = timer
                return true
            }
            if !stillWaiting { timer.cancel() }
        }
    }

    /// Suspends until at least `count` values were recorded; false when `timeout` passed first.
    @discardableResult
    public func wait(forCount count: Int, timeout: Duration = .seconds(300)) async -> Bool {
        await wait(timeout: timeout) { $0.count >= count }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: false)
    }
}

extension Recording where Value: Equatable {
    /// Suspends until `value` was recorded; false when `timeout` passed first.
    @discardableResult
    public func wait(for value: Value, timeout: Duration = .seconds(300)) async -> Bool {
        await wait(timeout: timeout) { $0.contains(value) }
    }
}
