/// What a group's loop hears.
enum GroupMessage: Sendable {
    case started(Int)
    case ended(Int, Result<Void, any Error>)
    case signal(UnixSignal)
    case timeElapsed
    case cancelled
    case gracefulShutdown
}

/// One run of a ``ServiceGroup``: the services' tasks and contexts, and the loop's state.
///
/// Each service runs in an unstructured task of its own, so that cancelling the group's task
/// does not cancel them all at once: the group hears of it as a message and stops them in order.
/// Every task it starts has ended when ``stop()`` returns.
struct GroupRun {
    let group: ServiceGroup
    let mailbox = GroupMailbox<GroupMessage>()
    private var contexts: [ServiceContext] = []
    private var tasks: [Task<Void, Never>] = []
    private var ended: Set<Int> = []
    private var reason: ServiceGroup.StopReason?
    private var signalWatcher: Task<Void, Never>?
    private var timer: Task<Void, Never>?
    /// Time since the first signal, once one came.
    private var sinceFirstSignal: (@Sendable () -> Duration)?
    private var escalated = false
    /// The first failure, reported when the run ends.
    private(set) var failure: ServiceGroupError?

    /// Traps the group's signals before anything starts, so an early signal still stops it.
    init(_ group: ServiceGroup) async {
        self.group = group
        guard !group.signals.isEmpty else { return }
        let signals = await UnixSignalsSequence(trapping: group.signals)
        let mailbox = mailbox
        signalWatcher = Task {
            for await signal in signals { mailbox.post(.signal(signal)) }
        }
    }

    /// Starts the services in order, each after the previous one announced it started, until
    /// all run or a reason to stop comes.
    mutating func start() async {
        for index in group.members.indices {
            guard reason == nil else { return }
            launch(index)
            while reason == nil {
                let message = await mailbox.next()
                if case .started(index) = message { break }
                handle(message)
            }
        }
        guard reason == nil else { return }
        group.onEvent(.started)
        announceStarted()  // to the group above, when this one is a service
        contexts.forEach { $0.groupStarted.open() }
        startTimer()
    }

    /// Waits for a reason to stop.
    mutating func waitForStop() async {
        while reason == nil { handle(await mailbox.next()) }
    }

    /// Stops the started services, last first, each once the later ones have ended.
    mutating func stop() async {
        group.onEvent(.stopping(reason ?? .cancelled))
        timer?.cancel()
        for index in tasks.indices.reversed() where !ended.contains(index) {
            contexts[index].shutDownGracefully()
            while !ended.contains(index) { handle(await mailbox.next()) }
        }
    }

    /// Ends the signal watcher and the timer.
    func finish() {
        signalWatcher?.cancel()
        timer?.cancel()
    }

    private mutating func launch(_ index: Int) {
        let mailbox = mailbox
        let context = ServiceContext { mailbox.post(.started(index)) }
        let service = group.members[index].service
        contexts.append(context)
        tasks.append(Task {
            let result: Result<Void, any Error>
            do {
                try await ServiceContext.$current.withValue(context) { try await service.run() }
                result = .success(())
            } catch {
                result = .failure(error)
            }
            mailbox.post(.ended(index, result))
        })
    }

    private mutating func startTimer() {
        guard let duration = group.duration else { return }
        let (mailbox, sleep) = (mailbox, group.sleep)
        timer = Task {
            do {
                try await sleep(duration)
                mailbox.post(.timeElapsed)
            } catch {
                // Cancelled: the group stopped for another reason.
            }
        }
    }

    private mutating func handle(_ message: GroupMessage) {
        switch message {
        case .started:
            break
        case .ended(let index, let result):
            ended.insert(index)
            let name = group.members[index].name
            switch result {
            case .failure(let error):
                // Cancelled services may say so; that is how they end once escalated.
                if escalated && error is CancellationError { break }
                // A set's failure names the member of it that failed (`loaders.home`).
                if group.members[index].service is ServiceSet, let inner = error as? ServiceGroupError {
                    fail(inner)
                } else {
                    fail(.serviceFailed(name, error))
                }
            case .success:
                if !contexts[index].isShuttingDown && !escalated { fail(.serviceEndedUnexpectedly(name)) }
            }
        case .signal(let signal):
            guard let since = sinceFirstSignal else {
                sinceFirstSignal = group.stopwatch()
                stop(because: .signal(signal))
                return
            }
            // A wrapper may signal the process and its group at once: one request, not two.
            if since() >= .seconds(1) && !escalated { escalate(signal) }
        case .timeElapsed:
            stop(because: .timeElapsed)
        case .cancelled:
            stop(because: .cancelled)
        case .gracefulShutdown:
            stop(because: .gracefulShutdown)
        }
    }

    private mutating func stop(because reason: ServiceGroup.StopReason) {
        if self.reason == nil { self.reason = reason }
    }

    private mutating func fail(_ error: ServiceGroupError) {
        if failure == nil { failure = error }
        stop(because: .serviceFailed(error.service))
    }

    private mutating func escalate(_ signal: UnixSignal) {
        escalated = true
        group.onEvent(.stoppingAtOnce(signal))
        tasks.forEach { $0.cancel() }
    }
}
