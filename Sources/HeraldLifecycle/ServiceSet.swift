import HeraldSync

/// Services that can be added and removed while they run: one member of a ``ServiceGroup``
/// standing for a changing set (a daemon's loaders, which a reload adds and removes).
///
/// ``run()`` starts the initial members in order, each once the one before announced it
/// started, then announces itself; once the group above has started every service, its members'
/// ``waitUntilGroupStarted()`` returns (at once for members added later). ``add(_:)`` starts one
/// more and returns once it announced itself; ``remove(_:)`` asks one to shut down gracefully and
/// returns once it ended. When the set is asked to shut down, it stops its members in reverse
/// order of start. A member that throws or ends before it was asked to stop fails the set, which
/// then stops the others and throws ``ServiceGroupError`` naming it.
///
/// `Sendable`: its state is behind a lock.
public final class ServiceSet: Service, Sendable {
    private struct Running {
        var context: ServiceContext
        var ended: Gate
        var task: Task<Void, Never>?
    }

    private struct State {
        var order: [String] = []
        var running: [String: Running] = [:]
        var groupStarted = false
        var stopping = false
        var failure: ServiceGroupError?
    }

    private let initial: SyncLock<[ServiceGroup.Member]>
    private let state = SyncLock(State())
    /// Opened when a member fails on its own or the set is asked to stop.
    private let wake = Gate()

    /// A set that starts with `members`, in order.
    public init(_ members: [ServiceGroup.Member] = []) {
        self.initial = SyncLock(members)
    }

    /// Adds a member ``run()`` starts, after those given before (call it before the run).
    public func addAtStart(_ member: ServiceGroup.Member) {
        initial.withLock { $0.append(member) }
    }

    /// The members' names, in order of start.
    public var names: [String] { state.withLock { $0.order } }

    /// Starts the initial members, runs until asked to stop or a member fails, stops them all.
    ///
    /// - Throws: ``ServiceGroupError`` naming the first member that failed.
    public func run() async throws {
        // Cancelled (the group escalates a second signal): every member is cancelled too.
        try await withTaskCancellationHandler {
            try await runMembers()
        } onCancel: {
            // Stopping from here on: a member that ends because of the cancellation has not
            // failed, and no new member is taken.
            state.withLock { state in
                state.stopping = true
                return state.running.values.compactMap(\.task)
            }.forEach { $0.cancel() }
        }
    }

    private func runMembers() async throws {
        try await withGracefulShutdownHandler {
            for member in initial.withLock({ $0 }) {
                do {
                    try await add(member)
                } catch {
                    await stopAll()
                    throw error
                }
            }
            announceStarted()
            if (try? await waitUntilGroupStarted()) != nil {
                let contexts = state.withLock { state in
                    state.groupStarted = true
                    return state.running.values.map(\.context)
                }
                contexts.forEach { $0.groupStarted.open() }
            }
            try? await wake.wait()
            await stopAll()
            if let failure = state.withLock({ $0.failure }) { throw failure }
        } onGracefulShutdown: { [wake] in
            wake.open()
        }
    }

    /// Starts `member` and returns once it announced that it started.
    ///
    /// - Throws: ``ServiceGroupError`` when a member of that name runs already, or the member
    ///   threw or ended before it announced itself (it is then not in the set).
    public func add(_ member: ServiceGroup.Member) async throws(ServiceGroupError) {
        let started = Gate()
        let context = ServiceContext { started.open() }
        let ended = Gate()
        let name = member.name
        let outcome = SyncLock<Result<Void, any Error>?>(nil)
        let accepted = state.withLock { state -> Bool in
            guard state.running[name] == nil, !state.stopping else { return false }
            state.running[name] = Running(context: context, ended: ended)
            state.order.append(name)
            // Once the group started, run() opened the gates of those running; later ones open here.
            if state.groupStarted { context.groupStarted.open() }
            return true
        }
        if accepted {
            let service = member.service
            let task = Task {
                let result: Result<Void, any Error>
                do {
                    try await ServiceContext.$current.withValue(context) { try await service.run() }
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                outcome.withLock { $0 = result }
                self.ended(name, context: context, result: result)
                ended.open()
                started.abandon()
            }
            state.withLock { $0.running[name]?.task = task }
        }
        guard accepted else {
            throw .serviceFailed(name, ServiceSetRefusal(name: name))
        }
        do {
            try await started.wait()
        } catch {
            switch outcome.withLock({ $0 }) {
            case .failure(let error)?: throw .serviceFailed(name, error)
            default: throw .serviceEndedUnexpectedly(name)
            }
        }
    }

    /// Asks the member `name` to shut down gracefully and returns once it ended (at once when
    /// there is none).
    public func remove(_ name: String) async {
        guard let running = state.withLock({ $0.running[name] }) else { return }
        running.context.shutDownGracefully()
        try? await running.ended.wait()
    }

    /// Whether a member of that name runs.
    public func contains(_ name: String) -> Bool {
        state.withLock { $0.running[name] != nil }
    }

    private func ended(_ name: String, context: ServiceContext, result: Result<Void, any Error>) {
        let failed = state.withLock { state -> Bool in
            state.running[name] = nil
            state.order.removeAll { $0 == name }
            guard !context.isShuttingDown, !state.stopping, context.hasStarted else { return false }
            if state.failure == nil {
                state.failure = switch result {
                case .failure(let error): .serviceFailed(name, error)
                case .success: .serviceEndedUnexpectedly(name)
                }
            }
            return true
        }
        if failed { wake.open() }
    }

    private func stopAll() async {
        let order = state.withLock { state in
            state.stopping = true
            return state.order
        }
        for name in order.reversed() { await remove(name) }
    }
}

/// Why ``ServiceSet/add(_:)`` refused a member: its name is taken, or the set is stopping.
public struct ServiceSetRefusal: Error, Sendable, CustomStringConvertible {
    /// The member's name.
    public var name: String

    /// `<name> runs already, or the set is stopping`.
    public var description: String { "\(name) runs already, or the set is stopping" }
}
