import Herald

/// What the three loaders share: joining a running load, reading the state file once, saving
/// it after each success, and announcing exactly one finished or failed event per load. A
/// conforming actor supplies the one service call (``fetch(previous:)``).
protocol StatefulLoader: Loader {
    var bus: EventBus { get }
    var store: any LoaderStateStorage { get }
    /// The kind named in `LoadFailed` (`timeline`, `tiqav`, `todo`).
    nonisolated var kind: String { get }
    var state: LoaderState? { get set }
    var running: Task<LoadOutcome, Never>? { get set }
    var writeFailureReported: Bool { get set }

    /// One exchange with the service: the state to keep, the finished event, the outcome.
    func fetch(previous: LoaderState) async throws -> Fetched
}

/// A successful fetch.
struct Fetched: Sendable {
    var state: LoaderState
    var event: any Event
    var outcome: LoadOutcome
}

extension StatefulLoader {
    /// Loads once, or joins the load in progress; cancelling the caller cancels the request.
    ///
    /// The load is an unstructured task because several callers join it (a schedule's tick
    /// and a `herald load`); each awaits it, and it does not throw: a failure is announced
    /// (`LoadFailed`) and returned.
    func loadOnce() async -> LoadOutcome {
        let task: Task<LoadOutcome, Never>
        if let running {
            task = running
        } else {
            task = Task { await self.performLoad() }
            running = task
        }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    private func performLoad() async -> LoadOutcome {
        defer { running = nil }
        let previous: LoaderState
        if let state {
            previous = state
        } else {
            previous = await LoaderSupport.readState(id: id, store: store, bus: bus, sender: sender)
            state = previous
        }
        do {
            let fetched = try await fetch(previous: previous)
            // Announce, then save: inline subscribers (the post scheduler) have queued their
            // intents on the durable-state I/O thread before the publish returns, and the save
            // is queued on that same first-in-first-out thread after them, so the state never
            // says an item was seen before its intent is on the disk; a crash in between
            // announces the items again rather than losing them.
            // An announcement the bus refused (it is shutting down) reached no subscriber: the
            // state is not saved, so the items come again after a restart instead of being lost.
            // A cluster node that lost the loader's lease while the request was out (paused
            // longer than the lease) announces nothing and saves nothing: the holder now loads
            // the same items from the state it read.
            guard store.mayAnnounce(id) else { return fetched.outcome }
            guard await LoaderSupport.announce(fetched.event, on: bus, from: sender) else { return fetched.outcome }
            await save(fetched.state)
            return fetched.outcome
        } catch {
            let failure = LoadError(error)
            await LoaderSupport.announce(LoadFailed(loader: id, kind: kind, error: failure), on: bus, from: sender)
            return .failed(failure)
        }
    }

    private func save(_ next: LoaderState) async {
        state = next
        guard let event = await LoaderSupport.write(next, id: id, to: store), !writeFailureReported else { return }
        writeFailureReported = true
        await LoaderSupport.announce(event, on: bus, from: sender)
    }
}
