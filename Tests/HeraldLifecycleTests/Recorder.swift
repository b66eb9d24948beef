import HeraldSync

/// Lines recorded from many tasks, and waits for a condition on them (no sleeping).
final class Recorder<Line: Sendable>: Sendable {
    private struct State {
        var lines: [Line] = []
        var waiters: [(condition: @Sendable ([Line]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = SyncLock(State())

    init() {}

    var lines: [Line] { state.withLock { $0.lines } }

    func record(_ line: Line) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.lines.append(line)
            let lines = state.lines
            let ready = state.waiters.filter { $0.condition(lines) }.map(\.continuation)
            state.waiters.removeAll { $0.condition(lines) }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    /// Suspends until `condition` holds on the lines.
    func wait(until condition: @escaping @Sendable ([Line]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if condition(state.lines) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

extension Recorder where Line: Equatable {
    func wait(for line: Line) async {
        await wait { $0.contains(line) }
    }
}
