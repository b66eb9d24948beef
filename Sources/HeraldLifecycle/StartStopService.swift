/// A part with a start and a stop, run as a service: started, announced, kept until it is asked
/// to stop (gracefully or by cancellation), then stopped.
///
/// For parts that run on threads or subscriptions of their own (a file sink, a log subscriber),
/// whose `start` and `stop` are the whole of their lifecycle.
public struct StartStopService: Service {
    private let start: @Sendable () async throws -> Void
    private let stop: @Sendable () async -> Void

    /// - Parameters:
    ///   - start: starts the part; an error it throws fails the service (and `stop` is not called).
    ///   - stop: stops it, draining what it holds; called once, however the service is stopped.
    public init(start: @escaping @Sendable () async throws -> Void, stop: @escaping @Sendable () async -> Void) {
        self.start = start
        self.stop = stop
    }

    /// Starts, announces, waits for the request to stop, stops.
    public func run() async throws {
        try await start()
        announceStarted()
        // Graceful shutdown and cancellation both end the wait; either way the part stops.
        try? await gracefulShutdown()
        await stop()
    }
}
