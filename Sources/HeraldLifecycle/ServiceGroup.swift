/// Runs services: starts them in order, each once the one before announced it started, and
/// stops them in reverse order, each after the one after it has ended.
///
/// It stops when one of its signals comes (see ``UnixSignalsSequence``), when its duration has
/// passed, when the task running it is cancelled, when it is asked to shut down gracefully (a
/// group is itself a ``Service``), or when a service throws or ends on its own. Stopping asks
/// each service to shut down gracefully (see ``gracefulShutdown()``) and waits for it to end;
/// cancelling the group's task is such a request, not a cancellation of the services, so they
/// drain in order. A stop signal that comes again later than a second after the first cancels
/// every service instead.
///
/// ```swift
/// let group = ServiceGroup([.init("sandbox", sandbox), .init("log", log), .init("loaders.home", home)],
///                          signals: [.sigint, .sigterm])
/// try await group.run()   // throws ServiceGroupError naming the service that failed
/// ```
public struct ServiceGroup: Sendable {
    /// A service and the name the group reports it by.
    public struct Member: Sendable {
        /// The name, as errors and events give it (`loaders.home`).
        public var name: String
        /// The service.
        public var service: any Service

        /// A named service.
        public init(_ name: String, _ service: any Service) {
            self.name = name
            self.service = service
        }
    }

    let members: [Member]
    let signals: [UnixSignal]
    let duration: Duration?
    let sleep: @Sendable (Duration) async throws -> Void
    /// Starts a stopwatch on the group's clock: the returned closure tells the time since.
    let stopwatch: @Sendable () -> @Sendable () -> Duration
    let onEvent: @Sendable (Event) -> Void

    /// A group.
    ///
    /// - Parameters:
    ///   - members: the services in start order.
    ///   - signals: the signals that stop it (none by default: a library or a test must not
    ///     take the process's signals unasked).
    ///   - duration: how long it runs once every service started (nil: until something stops it).
    ///   - clock: the clock `duration` is measured on (a manual clock in tests).
    ///   - onEvent: told when every service started and when and why the group stops; called
    ///     on the group's task, so it should not block.
    public init<C: Clock>(_ members: [Member], signals: [UnixSignal] = [], stopAfter duration: Duration? = nil, clock: C,
                          onEvent: @escaping @Sendable (Event) -> Void = { _ in }) where C.Duration == Duration {
        self.members = members
        self.signals = signals
        self.duration = duration
        self.sleep = { try await clock.sleep(for: $0) }
        self.stopwatch = {
            let start = clock.now
            return { start.duration(to: clock.now) }
        }
        self.onEvent = onEvent
    }

    /// A group on the continuous clock (see the other initialiser).
    public init(_ members: [Member], signals: [UnixSignal] = [], stopAfter duration: Duration? = nil,
                onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.init(members, signals: signals, stopAfter: duration, clock: ContinuousClock(), onEvent: onEvent)
    }
}

extension ServiceGroup: Service {
    /// Starts the services in order, waits for a reason to stop, stops them in reverse order.
    ///
    /// Returns once every service it started has ended.
    ///
    /// - Throws: ``ServiceGroupError`` naming the first service that threw (while starting,
    ///   running or stopping) or ended before it was asked to.
    public func run() async throws(ServiceGroupError) {
        var run = await GroupRun(self)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await run.start()
                await run.waitForStop()
                await run.stop()
            } onGracefulShutdown: { [mailbox = run.mailbox] in
                mailbox.post(.gracefulShutdown)
            }
        } onCancel: { [mailbox = run.mailbox] in
            mailbox.post(.cancelled)
        }
        run.finish()
        if let failure = run.failure { throw failure }
    }
}
