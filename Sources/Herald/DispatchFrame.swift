import HeraldSync
/// Keeps inline delivery in causal order when handlers publish.
///
/// While an event is delivered to several subscribers, a handler may publish another event. If
/// that event were delivered at once, a later subscriber would see it before the event that
/// caused it. Instead, a publish made inside a frame is queued in the frame and delivered when
/// the current delivery finishes, breadth first.
///
/// Frames are found through a task-local list (innermost first), one frame per bus, and only
/// publishes from the task (or thread) that opened the frame join it: a task started inside a
/// handler inherits the list but publishes on its own.
@usableFromInline
final class DispatchFrame: Sendable {
    @TaskLocal static var current: DispatchFrame?

    private struct State {
        var pending: [@Sendable () -> Void] = []
        var closed = false
    }

    let core: BusCore
    /// The frame that was current when this one opened (possibly another bus's).
    let outer: DispatchFrame?
    /// The task that opened the frame (nil on a thread outside any task). Only compared for
    /// identity, while the frame is open, that is while that task is running the delivery.
    nonisolated(unsafe) let owner: UnsafeCurrentTask?
    private let state = SyncLock(State())

    init(core: BusCore) {
        self.core = core
        self.outer = DispatchFrame.current
        self.owner = withUnsafeCurrentTask(body: { $0 })
    }

    /// The open frame of `core` that the caller's task opened, if any.
    static func find(for core: BusCore) -> DispatchFrame? {
        var frame = current
        while let candidate = frame, candidate.core !== core { frame = candidate.outer }
        guard let frame, withUnsafeCurrentTask(body: { $0 == frame.owner }) else { return nil }
        return frame
    }

    /// Queues a delivery; false when the frame already closed (the caller delivers itself).
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
