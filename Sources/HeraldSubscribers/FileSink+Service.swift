import Herald
import HeraldLifecycle

extension FileSink {
    /// This sink as a member of a `ServiceGroup`: its ``run(on:)`` on `bus`. Stopped gracefully
    /// (after the services started later), it writes what waits in its mailbox, then syncs and
    /// closes the file on its I/O thread.
    public func service(on bus: EventBus) -> some Service {
        ClosureService { try await self.run(on: bus) }
    }
}
