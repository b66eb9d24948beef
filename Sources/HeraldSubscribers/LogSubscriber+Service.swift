import Herald
import HeraldLifecycle

extension LogSubscriber {
    /// This subscriber as a member of a `ServiceGroup`: its ``run(on:)`` on `bus`. Stopped
    /// gracefully (after the services started later), it writes what waits in its mailbox first.
    public func service(on bus: EventBus) -> some Service {
        ClosureService { try await self.run(on: bus) }
    }
}
