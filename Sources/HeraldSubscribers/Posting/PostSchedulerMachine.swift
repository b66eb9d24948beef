import Herald

/// The lifecycle of a ``PostScheduler``: it decides, under the scheduler's lock, and returns what
/// the scheduler must do; the scheduler only locks and acts (the shape of swift-async-algorithms'
/// `BoundedBufferStateMachine`, and of the cluster's `LeaseMachine`).
///
/// A scheduler runs once: `idle`, then `starting` (its outbox is read), `running` (its rules'
/// subscriptions and queues live), `stopping` (asked to stop; its workers end), `finished`. A
/// second ``PostScheduler/run(on:)`` is refused in every state but `idle`.
///
/// Generic over the bus, the queue and the subscription so that its tests need neither.
struct PostSchedulerMachine<Bus, Queue, Token> {
    /// What a running scheduler holds.
    struct Running {
        var bus: Bus
        /// The rules' queues, by rule name.
        var queues: [String: Queue]
        var subscriptions: [Token] = []
    }

    enum State {
        case idle
        case starting
        case running(Running)
        case stopping
        case finished
    }

    private(set) var state: State = .idle

    /// What ``run()`` decides.
    enum RunAction: Equatable {
        /// Read the outbox and start.
        case start
        /// Refuse: this scheduler runs (or ran) already.
        case refuse(PostSchedulerError.Reason)
    }

    /// A run begins.
    mutating func run() -> RunAction {
        switch state {
        case .idle:
            state = .starting
            return .start
        case .starting, .running, .stopping:
            return .refuse(.running)
        case .finished:
            return .refuse(.finished)
        }
    }

    /// The outbox is read and the queues are made: intake may enqueue from now on.
    mutating func started(bus: Bus, queues: [String: Queue]) {
        guard case .starting = state else { return }
        state = .running(Running(bus: bus, queues: queues))
    }

    /// What ``subscribed(_:)`` decides.
    enum SubscribedAction {
        /// Keep them: the scheduler runs.
        case keep
        /// The scheduler stopped meanwhile: cancel them.
        case cancel([Token])
    }

    /// The rules' subscriptions are made.
    mutating func subscribed(_ subscriptions: [Token]) -> SubscribedAction {
        guard case .running(var running) = state else { return .cancel(subscriptions) }
        running.subscriptions = subscriptions
        state = .running(running)
        return .keep
    }

    /// What ``enqueue(rule:)`` decides for an intent of `rule`.
    enum EnqueueAction {
        /// Hand it to this queue.
        case enqueue(Queue)
        /// No rule of that name runs: the intent stays in the journal, reported.
        case unknownRule
        /// The scheduler is not running: the intent stays in the journal for the next run.
        case notRunning
    }

    /// Where an intent of `rule` goes.
    func enqueue(rule: String) -> EnqueueAction {
        guard case .running(let running) = state else { return .notRunning }
        guard let queue = running.queues[rule] else { return .unknownRule }
        return .enqueue(queue)
    }

    /// The bus outcomes are published on, while the scheduler runs.
    var bus: Bus? {
        if case .running(let running) = state { running.bus } else { nil }
    }

    /// What ``stop()`` decides.
    enum StopAction {
        /// End these subscriptions and finish these queues; the workers then end.
        case end(subscriptions: [Token], queues: [Queue])
        /// Nothing runs (any more).
        case none
    }

    /// The scheduler is asked to stop: nothing is enqueued or published from now on.
    mutating func stop() -> StopAction {
        switch state {
        case .running(let running):
            state = .stopping
            return .end(subscriptions: running.subscriptions, queues: Array(running.queues.values))
        case .starting:
            state = .stopping
            return .none
        case .idle, .stopping, .finished:
            return .none
        }
    }

    /// The run ended (its journal closed, or it failed to start): the scheduler never runs again.
    mutating func finished() {
        state = .finished
    }
}

/// Why a ``PostScheduler`` did not run.
public struct PostSchedulerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// ``PostScheduler/run(on:)`` was called while a run was in progress.
        case running
        /// ``PostScheduler/run(on:)`` was called after a run ended: a scheduler runs once.
        case finished
    }

    /// The scheduler's name.
    public var scheduler: String
    /// What went wrong.
    public var reason: Reason

    /// A refusal of scheduler `scheduler`'s run.
    public init(scheduler: String, reason: Reason) {
        self.scheduler = scheduler
        self.reason = reason
    }

    /// `post scheduler posts: already running; a scheduler runs once`, or the like.
    public var description: String {
        switch reason {
        case .running: "post scheduler \(scheduler): already running; a scheduler runs once"
        case .finished: "post scheduler \(scheduler): already ran; a scheduler runs once (make a new one on the same outbox)"
        }
    }
}
