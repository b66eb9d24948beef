import HeraldLifecycle

/// Services running in a group of their own until ``stop()``: what a test uses to run a
/// subscriber, a scheduler or a cluster member the way the daemon does.
public final class RunningGroup: Sendable {
    private let task: Task<Result<Void, ServiceGroupError>, Never>

    /// Starts the members in order; returns once every one announced it started, or the group
    /// began to stop (a member failed to start: ``stop()`` says why).
    public init(_ members: [ServiceGroup.Member]) async {
        let (started, continuation) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(members, onEvent: { event in
            if event == .started { continuation.yield() }
            if case .stopping = event { continuation.finish() }
        })
        task = Task {
            do throws(ServiceGroupError) {
                try await group.run()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        for await _ in started { break }
    }

    /// One service, named `name`, in a group of its own.
    public convenience init(_ name: String, _ service: any Service) async {
        await self.init([.init(name, service)])
    }

    /// Stops the members in reverse order (gracefully: each drains what it holds) and returns
    /// how the group ended.
    @discardableResult
    public func stop() async -> Result<Void, ServiceGroupError> {
        task.cancel()
        return await task.value
    }
}
