import Herald
import HeraldLifecycle

extension LogSubscriber {
    /// This subscriber as a member of a `ServiceGroup`: its ``run(on:)`` on `bus`. Stopped
    /// gracefully (after the services started later), it writes what waits in its mailbox first.
    public func service(on bus: EventBus) -> some Service {
        OnBus(subscriber: self, bus: bus)
    }

    private struct OnBus: Service {
        let subscriber: LogSubscriber
        let bus: EventBus

        func run() async throws { try await subscriber.run(on: bus) }
    }
}
