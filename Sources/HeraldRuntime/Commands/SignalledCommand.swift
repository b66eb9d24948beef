import HeraldLifecycle

/// One piece of a command's work (`herald post`'s post, `herald tail --follow`'s following) run
/// as the only service of a `ServiceGroup` that stops on SIGINT and SIGTERM: the same signal
/// sequence, and the same "a second signal over a second later stops at once" rule, as the
/// daemon's group, with no signal handler of the command's own.
///
/// The work runs under `cancelWhenGracefulShutdown`: a stop signal cancels it (a request in
/// flight stops), and what it returned or threw is the command's result.
enum SignalledCommand {
    /// Runs `work` until it returns, throws, or a stop signal (with `stopOnSignals`) or the
    /// calling task's cancellation cancels it.
    ///
    /// - Parameter stopping: told when the group begins to stop, and why (``DaemonStopping/signal(_:)``
    ///   when a signal came; ``DaemonStopping/signalAgain(_:)`` when it came again: the work is
    ///   cancelled already, and the host may exit at once).
    /// - Returns: what `work` returned.
    /// - Throws: what `work` threw (a `CancellationError`, or the work's own error for being
    ///   cancelled, once a signal cancelled it).
    static func run<T: Sendable>(_ name: String, stopOnSignals: Bool, stopping: @escaping @Sendable (DaemonStopping) -> Void,
                                 _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let (results, deliver) = AsyncStream.makeStream(of: Result<T, any Error>.self)
        let group = ServiceGroup([.init(name, Job(work: work, deliver: deliver))], signals: stopOnSignals ? [.sigint, .sigterm] : []) { event in
            switch event {
            case .started: break
            case .stopping(let reason): stopping(DaemonStopping(reason))
            case .stoppingAtOnce(let signal): stopping(.signalAgain(signal.rawValue))
            }
        }
        let (result, ended) = await withTaskGroup(of: Result<Void, ServiceGroupError>?.self) { tasks in
            tasks.addTask {
                do throws(ServiceGroupError) {
                    try await group.run()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            var iterator = results.makeAsyncIterator()
            let result = await iterator.next()
            // The work is done: the group stops (its task's cancellation asks it to, gracefully).
            tasks.cancelAll()
            var ended: Result<Void, ServiceGroupError>?
            for await outcome in tasks { if let outcome { ended = outcome } }
            return (result, ended)
        }
        if let result { return try result.get() }
        if case .failure(let error)? = ended { throw error }
        throw CancellationError()
    }

    /// The work as a service: it announces itself, runs the work (cancelled on a graceful
    /// shutdown), delivers the result, then waits to be stopped.
    private struct Job<T: Sendable>: Service {
        let work: @Sendable () async throws -> T
        let deliver: AsyncStream<Result<T, any Error>>.Continuation

        func run() async throws {
            announceStarted()
            let result: Result<T, any Error>
            do {
                result = .success(try await cancelWhenGracefulShutdown(work))
            } catch {
                result = .failure(error)
            }
            deliver.yield(result)
            deliver.finish()
            // A group's service runs until it is asked to stop: the caller asks, having the result.
            try? await gracefulShutdown()
        }
    }
}
