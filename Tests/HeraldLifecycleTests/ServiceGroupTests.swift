#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HeraldTestSupport
import Testing
@testable import HeraldLifecycle
import HeraldTesting

@Suite struct ServiceGroupTests {
    /// Runs `group` in a task; the events it reports go to `events`.
    static func members(_ names: [String], _ log: Recording<String>) -> [ServiceGroup.Member] {
        names.map { ServiceGroup.Member($0, RecordingService(name: $0, log: log)) }
    }

    @Test func servicesStartInOrderAndStopInReverseOrder() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        // The first service announces itself only when the test opens its gate: the others
        // must not have started before that.
        let firstReady = HeraldLifecycle.Gate()
        let members = [ServiceGroup.Member("a", RecordingService(name: "a", log: log, ready: firstReady))] + Self.members(["b", "c"], log)
        let group = ServiceGroup(members, onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await log.wait(for: "start a")
        firstReady.open()
        await events.wait(for: .started)
        run.cancel()
        try await run.value

        #expect(log.values == ["start a", "ready a", "start b", "ready b", "start c", "ready c", "stop c", "stop b", "stop a"])
        #expect(events.values == [.started, .stopping(.cancelled)])
    }

    @Test func aFailingServiceStopsTheOthersInReverseAndIsNamed() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        let members = Self.members(["a", "b"], log) + [.init("c", FailingService(name: "c", log: log))] + Self.members(["d"], log)
        let group = ServiceGroup(members, onEvent: { events.append($0) })
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }

        #expect(error?.service == "c")
        #expect((error?.underlying as? Failure) == Failure(message: "c broke"))
        #expect(error?.description == "c: c broke")
        #expect(events.values == [.started, .stopping(.serviceFailed("c"))])
        #expect(Array(log.values.suffix(3)) == ["stop d", "stop b", "stop a"])
    }

    @Test func aServiceFailingToStartStopsThoseBeforeItAndStartsNoMore() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        let members = Self.members(["a", "b"], log) + [.init("c", FailingService(name: "c", log: log, announces: false))] + Self.members(["d"], log)
        let group = ServiceGroup(members, onEvent: { events.append($0) })
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }

        #expect(error?.service == "c")
        #expect(log.values == ["start a", "ready a", "start b", "ready b", "start c", "stop b", "stop a"])
        #expect(events.values == [.stopping(.serviceFailed("c"))])
    }

    @Test func aServiceThatEndsOnItsOwnStopsTheGroup() async throws {
        let log = Recording<String>()
        struct Quitter: Service {
            func run() async throws { announceStarted() }
        }
        let group = ServiceGroup(Self.members(["a"], log) + [.init("quitter", Quitter())])
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }
        #expect(error?.service == "quitter" && error?.endedUnexpectedly == true)
        #expect(log.values.last == "stop a")
    }

    /// A queue that drains on graceful shutdown; the producer after it in the group hands it
    /// one last item when it is stopped (first, being later).
    @Test func gracefulShutdownLetsAServiceDrainBeforeItEnds() async throws {
        let log = Recording<String>()
        let queue = Recording<String>()
        struct Drainer: Service {
            let queue: Recording<String>
            let log: Recording<String>
            func run() async throws {
                announceStarted()
                try await gracefulShutdown()
                // Not cancelled: it may take what time it needs.
                log.append("draining \(queue.values.joined(separator: ",")) cancelled: \(Task.isCancelled)")
            }
        }
        struct Producer: Service {
            let queue: Recording<String>
            func run() async throws {
                queue.append("first")
                announceStarted()
                try await withGracefulShutdownHandler {
                    try await gracefulShutdown()
                } onGracefulShutdown: {
                    queue.append("handler saw the shutdown")
                }
                queue.append("last")
            }
        }
        let events = Recording<ServiceGroup.Event>()
        let group = ServiceGroup([.init("drainer", Drainer(queue: queue, log: log)), .init("producer", Producer(queue: queue))],
                                 onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.values == ["draining first,handler saw the shutdown,last cancelled: false"])
    }

    @Test func cancelWhenGracefulShutdownCancelsTheOperation() async throws {
        let log = Recording<String>()
        struct Worker: Service {
            let log: Recording<String>
            func run() async throws {
                announceStarted()
                let outcome = await (try? cancelWhenGracefulShutdown {
                    // Cancellation, brought by the graceful shutdown, ends this wait.
                    try await HeraldLifecycle.Gate().wait()
                    return "finished"
                }) ?? "cancelled"
                log.append(outcome)
            }
        }
        let events = Recording<ServiceGroup.Event>()
        let group = ServiceGroup([.init("worker", Worker(log: log))], onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.values == ["cancelled"])
    }

    @Test func theDurationStopsTheGroupOnceEveryServiceStarted() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        let clock = ManualClock()
        let group = ServiceGroup(Self.members(["a", "b"], log), stopAfter: .seconds(30), clock: clock, onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await clock.waitForSleepers(1)
        // The timer counts from when all started.
        #expect(events.values == [.started])
        clock.advance(by: .seconds(30))
        try await run.value
        #expect(events.values == [.started, .stopping(.timeElapsed)])
        #expect(Array(log.values.suffix(2)) == ["stop b", "stop a"])
    }

    /// A service waiting for the whole group when the group stops while still starting: it is
    /// told in its turn, and ending then is no failure.
    @Test func stoppingWhileStartingReleasesServicesWaitingForTheGroupInTheirTurn() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        struct Patient: Service {
            let log: Recording<String>
            func run() async throws {
                announceStarted()
                do {
                    try await waitUntilGroupStarted()
                    log.append("began work")
                } catch {
                    log.append("never began, shutting down: \(Task.isShuttingDownGracefully)")
                }
            }
        }
        struct NeverReady: Service {
            let log: Recording<String>
            func run() async throws {
                log.append("starting")
                try? await gracefulShutdown()
                log.append("gave up starting")
            }
        }
        let group = ServiceGroup([.init("patient", Patient(log: log)), .init("slow", NeverReady(log: log))], onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await log.wait(for: "starting")
        run.cancel()
        try await run.value
        #expect(log.values == ["starting", "gave up starting", "never began, shutting down: true"])
        #expect(events.values == [.stopping(.cancelled)])
    }

    @Test func aGroupIsAServiceOfAnotherGroup() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        let inner = ServiceGroup(Self.members(["inner.a", "inner.b"], log))
        let outer = ServiceGroup(Self.members(["a"], log) + [.init("inner", inner)] + Self.members(["c"], log), onEvent: { events.append($0) })
        let run = Task { try await outer.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.values == ["start a", "ready a", "start inner.a", "ready inner.a", "start inner.b", "ready inner.b", "start c", "ready c",
                              "stop c", "stop inner.b", "stop inner.a", "stop a"])
    }
}

/// Real signals, raised in this process: one test at a time, on SIGUSR2, which nothing else
/// here traps.
@Suite(.serialized) struct ServiceGroupSignalTests {
    @Test func aSignalStopsTheGroupInReverseOrder() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        let group = ServiceGroup(ServiceGroupTests.members(["a", "b"], log), signals: [.sigusr2], onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        // The signals are trapped before the first service starts.
        await events.wait(for: .started)
        kill(getpid(), SIGUSR2)
        try await run.value
        #expect(events.values == [.started, .stopping(.signal(.sigusr2))])
        #expect(Array(log.values.suffix(2)) == ["stop b", "stop a"])
    }

    @Test func theSameSignalALittleLaterCancelsTheServicesInsteadOfWaiting() async throws {
        let log = Recording<String>(), events = Recording<ServiceGroup.Event>()
        /// Drains forever unless cancelled.
        struct Stuck: Service {
            let log: Recording<String>
            func run() async throws {
                announceStarted()
                try await gracefulShutdown()
                log.append("draining")
                do { try await HeraldLifecycle.Gate().wait() } catch { log.append("cancelled while draining") }
            }
        }
        let clock = ManualClock()
        let group = ServiceGroup(ServiceGroupTests.members(["a"], log) + [.init("stuck", Stuck(log: log))], signals: [.sigusr2], clock: clock,
                                 onEvent: { events.append($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        kill(getpid(), SIGUSR2)
        await log.wait(for: "draining")
        clock.advance(by: .seconds(1))
        kill(getpid(), SIGUSR2)
        try await run.value
        #expect(events.values == [.started, .stopping(.signal(.sigusr2)), .stoppingAtOnce(.sigusr2)])
        #expect(Set(log.values.suffix(2)) == ["cancelled while draining", "stop a (cancelled)"])
    }

    @Test func theSequenceDeliversARaisedSignalAgainAfterAnEarlierOneIsGone() async throws {
        for round in 1...2 {
            let signals = await UnixSignalsSequence(trapping: .sigusr2)
            kill(getpid(), SIGUSR2)
            var iterator = signals.makeAsyncIterator()
            #expect(await iterator.next() == .sigusr2, "round \(round)")
        }
    }

    @Test func aClosureServiceRunsItsClosureInTheGroupAndItsErrorIsNamed() async throws {
        let log = Recording<String>()
        let closure = ClosureService { try await RecordingService(name: "wrapped", log: log).run() }
        let failing = ClosureService { throw Failure(message: "closure broke") }
        let group = ServiceGroup([.init("a", closure), .init("b", failing)], clock: ContinuousClock())
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }
        #expect(error?.service == "b")
        #expect((error?.underlying as? Failure) == Failure(message: "closure broke"))
        #expect(log.values == ["start wrapped", "ready wrapped", "stop wrapped"], "the closure ran as the service, announced and stopped in turn")
    }
}
