import Herald
import HeraldLifecycle

extension PostScheduler {
    /// This scheduler as a service of a `ServiceGroup`: started on `bus` when the group starts it
    /// (resuming its outbox; failing with what ``start(on:)`` throws), stopped when the group
    /// stops it (what it has not sent stays in its outbox).
    public func service(on bus: EventBus) -> StartStopService {
        StartStopService(start: {
            // The outbox is read and compacted on its I/O thread, not on the group's task.
            try await self.prepare()
            try self.start(on: bus)
        }, stop: { await self.stop() })
    }
}
