import Herald
import HeraldLifecycle

extension LogSubscriber {
    /// This subscriber as a service of a `ServiceGroup`: subscribed to `bus` when the group
    /// starts it (failing with what ``start(on:)`` throws), unsubscribed when the group stops it,
    /// after the services started later.
    public func service(on bus: EventBus) -> StartStopService {
        StartStopService(start: { try self.start(on: bus) }, stop: { self.stop() })
    }
}
