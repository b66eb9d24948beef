/// Tells the ``ServiceGroup`` running the calling service that it has started: the group starts
/// the next service only then. Calling it again, or outside a group, does nothing.
public func announceStarted() {
    ServiceContext.current?.announceStarted()
}

/// Suspends until every service of the group running the calling service has started.
///
/// A service that must not begin its work before the whole group runs (a schedule whose first
/// load would race the program's "running" line) waits here after ``announceStarted()``.
/// Outside a group it returns at once.
///
/// - Throws: `CancellationError` when the task is cancelled, or the calling service is asked to
///   shut down before the group started every service.
public func waitUntilGroupStarted() async throws {
    guard let context = ServiceContext.current else { return }
    try await context.groupStarted.wait()
}

/// Suspends until the calling service is asked to shut down gracefully.
///
/// Outside a group only cancellation ends the wait.
///
/// - Throws: `CancellationError` when the task is cancelled first.
public func gracefulShutdown() async throws {
    guard let context = ServiceContext.current else {
        try await Gate().wait()  // never opened: only cancellation ends it
        return
    }
    try await context.shutdown.wait()
}

/// Runs `operation`, calling `handler` once if the calling service is asked to shut down
/// gracefully meanwhile (at once if it already was).
///
/// The handler runs on the thread that asked for the shutdown: it should only signal
/// `operation` (finish a stream, open a gate), not block. Outside a group it is never called.
public func withGracefulShutdownHandler<T>(
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> T,
    onGracefulShutdown handler: @escaping @Sendable () -> Void
) async rethrows -> T {
    guard let context = ServiceContext.current else { return try await operation() }
    let id = context.register(handler)
    defer { if let id { context.remove(id) } }
    return try await operation()
}

/// Runs `operation` in a task of its own that is cancelled when the calling service is asked to
/// shut down gracefully, or the calling task is cancelled; returns or throws what it does.
///
/// For work that has nothing to drain: a schedule whose load in flight should stop at once.
public func cancelWhenGracefulShutdown<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    // An unstructured task keeps the task-locals (the service's context) and is cancelled here
    // by hand, so the two reasons to stop are one.
    let task = Task { try await operation() }
    return try await withTaskCancellationHandler {
        try await withGracefulShutdownHandler {
            try await task.value
        } onGracefulShutdown: {
            task.cancel()
        }
    } onCancel: {
        task.cancel()
    }
}

extension Task where Success == Never, Failure == Never {
    /// Whether the calling service was asked to shut down gracefully (false outside a group).
    public static var isShuttingDownGracefully: Bool {
        ServiceContext.current?.isShuttingDown ?? false
    }
}
