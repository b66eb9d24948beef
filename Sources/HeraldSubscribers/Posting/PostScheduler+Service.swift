import Herald
import HeraldLifecycle

extension PostScheduler {
    /// This scheduler as a member of a `ServiceGroup`: its ``run(on:)`` on `bus` (what it has not
    /// sent when the group stops it stays in its outbox).
    public func service(on bus: EventBus) -> some Service {
        ClosureService { try await self.run(on: bus) }
    }
}
