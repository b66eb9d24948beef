import HeraldSync

/// What a service's task knows of the group running it: its graceful-shutdown request, its
/// handlers, how it announces that it started, and the whole group's start.
///
/// Reached through the task-local ``current``, as swift-service-lifecycle reaches its
/// graceful-shutdown manager, so a service's `run()` needs no parameters.
final class ServiceContext: Sendable {
    private struct State {
        var shuttingDown = false
        var started = false
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
    }

    @TaskLocal static var current: ServiceContext?

    private let state = SyncLock(State())
    private let onStarted: @Sendable () -> Void
    /// Opened when the graceful shutdown is asked for.
    let shutdown = Gate()
    /// Opened when every service of the group started; abandoned when this service is asked
    /// to shut down first (in its turn, so a service waiting here does not end before it).
    let groupStarted = Gate()

    init(onStarted: @escaping @Sendable () -> Void) {
        self.onStarted = onStarted
    }

    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }

    /// Whether the service announced that it started.
    var hasStarted: Bool { state.withLock { $0.started } }

    /// Adds a handler, or runs it at once (returning nil) when the shutdown was already asked for.
    func register(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let id = state.withLock { state -> UInt64? in
            guard !state.shuttingDown else { return nil }
            state.nextID += 1
            state.handlers[state.nextID] = handler
            return state.nextID
        }
        if id == nil { handler() }
        return id
    }

    func remove(_ id: UInt64) {
        state.withLock { _ = $0.handlers.removeValue(forKey: id) }
    }

    /// Asks for the graceful shutdown: runs the handlers (outside the lock, so they may do
    /// anything), opens ``shutdown`` and abandons ``groupStarted`` unless it opened. Once only.
    func shutDownGracefully() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.shuttingDown else { return [] }
            state.shuttingDown = true
            defer { state.handlers = [:] }
            return state.handlers.sorted { $0.key < $1.key }.map(\.value)
        }
        handlers.forEach { $0() }
        shutdown.open()
        groupStarted.abandon()
    }

    /// Tells the group the service started. Once only.
    func announceStarted() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        if first { onStarted() }
    }
}
