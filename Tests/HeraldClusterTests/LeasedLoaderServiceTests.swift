import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldLoaders
import HeraldTestSupport
import Testing
import HeraldTesting

/// A leased loader's schedule is a child of the service, not a task of its own: what it throws
/// reaches the group, named, instead of vanishing.
@Suite(.timeLimit(.minutes(5))) struct LeasedLoaderServiceTests {
    struct ScheduleBroke: Error, Equatable {}

    private actor NoLoader: Loader {
        nonisolated let id = "home"
        func load() async -> LoadOutcome { .finished(items: 0, new: 0) }
    }

    private struct BrokenSchedule: Service {
        func run() async throws { throw ScheduleBroke() }
    }

    @Test func aScheduleThatThrowsFailsTheServiceAndTheGroupNamesIt() async throws {
        let clock = ManualClock()
        let leases = InMemoryKeyValue(name: "leases", ttl: .seconds(15), clock: clock)
        let lease = LoaderLease(loader: "home", node: "a", ttl: .seconds(15), bucket: leases, clock: clock)
        let bus = EventBus()
        let service = LeasedLoaderService(lease: lease, states: InMemoryKeyValue(name: "states", clock: clock), ledger: nil, bus: bus,
                                          clock: clock, makeLoader: { _ in NoLoader() }, makeSchedule: { _ in BrokenSchedule() })
        // The group ends on its own: the schedule threw as soon as the lease was taken.
        do throws(ServiceGroupError) {
            try await ServiceGroup([.init("loaders.home", service)]).run()
            Issue.record("the schedule's error vanished")
        } catch {
            #expect(error.service == "loaders.home")
            #expect(error.underlying as? ScheduleBroke == ScheduleBroke())
        }
        // The lease was given back as the service ended.
        #expect(try await leases.get("loader.home") == nil)
    }
}
