import Synchronization

/// Keeps inline delivery in causal order when handlers publish.
///
/// While an event is delivered to several subscribers, a handler may publish another event. If
/// that event were delivered at once, a later subscriber would see it before the event that
/// caused it. Instead, a publish made inside a frame is queued in the frame and delivered when
/// the current delivery finishes, breadth first. The frame is found through a task-local value,
/// so only publishes from the delivering thread's handlers join it.
@usableFromInline final class DispatchFrame: Sendable {
    @TaskLocal static var current: DispatchFrame?

    private struct State {
        var pending: [@Sendable () -> Void] = []
        var closed = false
    }

    let core: BusCore
    private let state = SyncLock(State())

    init(core: BusCore) {
        self.core = core
    }

    /// Queues a delivery; false when the frame already closed (the caller delivers itself).
    /// A task started inside a handler inherits the task-local frame: its publishes are queued
    /// here too while the frame is open, and delivered by the frame's thread; none is lost.
    @usableFromInline func `defer`(_ delivery: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.pending.append(delivery)
            return true
        }
    }

    /// Runs queued deliveries (and those they queue) until none is left, then closes.
    func runDeferred() {
        while true {
            let batch = state.withLock { s -> [@Sendable () -> Void] in
                if s.pending.isEmpty {
                    s.closed = true
                    return []
                }
                defer { s.pending.removeAll(keepingCapacity: true) }
                return s.pending
            }
            if batch.isEmpty { return }
            for delivery in batch { delivery() }
        }
    }
}
