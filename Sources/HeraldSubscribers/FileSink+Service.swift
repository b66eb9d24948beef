import Herald
import HeraldLifecycle

extension FileSink {
    /// This sink as a service of a `ServiceGroup`: started on `bus` when the group starts it
    /// (failing with what ``start(on:)`` throws), stopped (synced and closed) when the group
    /// stops it, after the services started later; the final sync runs on the sink's I/O thread
    /// (``finish()``), not on the group's task.
    public func service(on bus: EventBus) -> StartStopService {
        StartStopService(start: { try self.start(on: bus) }, stop: { await self.finish() })
    }
}
