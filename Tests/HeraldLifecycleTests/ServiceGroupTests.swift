#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HeraldTestSupport
import Testing
@testable import HeraldLifecycle

@Suite struct ServiceGroupTests {
    /// Runs `group` in a task; the events it reports go to `events`.
    static func members(_ names: [String], _ log: Recorder<String>) -> [ServiceGroup.Member] {
        names.map { ServiceGroup.Member($0, RecordingService(name: $0, log: log)) }
    }

    @Test func servicesStartInOrderAndStopInReverseOrder() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        // The first service announces itself only when the test opens its gate: the others
        // must not have started before that.
        let firstReady = HeraldLifecycle.Gate()
        let members = [ServiceGroup.Member("a", RecordingService(name: "a", log: log, ready: firstReady))] + Self.members(["b", "c"], log)
        let group = ServiceGroup(members, onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await log.wait(for: "start a")
        firstReady.open()
        await events.wait(for: .started)
        run.cancel()
        try await run.value

        #expect(log.lines == ["start a", "ready a", "start b", "ready b", "start c", "ready c", "stop c", "stop b", "stop a"])
        #expect(events.lines == [.started, .stopping(.cancelled)])
    }

    @Test func aFailingServiceStopsTheOthersInReverseAndIsNamed() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        let members = Self.members(["a", "b"], log) + [.init("c", FailingService(name: "c", log: log))] + Self.members(["d"], log)
        let group = ServiceGroup(members, onEvent: { events.record($0) })
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }

        #expect(error?.service == "c")
        #expect((error?.underlying as? Failure) == Failure(message: "c broke"))
        #expect(error?.description == "c: c broke")
        #expect(events.lines == [.started, .stopping(.serviceFailed("c"))])
        #expect(Array(log.lines.suffix(3)) == ["stop d", "stop b", "stop a"])
    }

    @Test func aServiceFailingToStartStopsThoseBeforeItAndStartsNoMore() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        let members = Self.members(["a", "b"], log) + [.init("c", FailingService(name: "c", log: log, announces: false))] + Self.members(["d"], log)
        let group = ServiceGroup(members, onEvent: { events.record($0) })
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }

        #expect(error?.service == "c")
        #expect(log.lines == ["start a", "ready a", "start b", "ready b", "start c", "stop b", "stop a"])
        #expect(events.lines == [.stopping(.serviceFailed("c"))])
    }

    @Test func aServiceThatEndsOnItsOwnStopsTheGroup() async throws {
        let log = Recorder<String>()
        struct Quitter: Service {
            func run() async throws { announceStarted() }
        }
        let group = ServiceGroup(Self.members(["a"], log) + [.init("quitter", Quitter())])
        let error = await #expect(throws: ServiceGroupError.self) { try await group.run() }
        #expect(error?.service == "quitter" && error?.endedUnexpectedly == true)
        #expect(log.lines.last == "stop a")
    }

    /// A queue that drains on graceful shutdown; the producer after it in the group hands it
    /// one last item when it is stopped (first, being later).
    @Test func gracefulShutdownLetsAServiceDrainBeforeItEnds() async throws {
        let log = Recorder<String>()
        let queue = Recorder<String>()
        struct Drainer: Service {
            let queue: Recorder<String>
            let log: Recorder<String>
            func run() async throws {
                announceStarted()
                try await gracefulShutdown()
                // Not cancelled: it may take what time it needs.
                log.record("draining \(queue.lines.joined(separator: ",")) cancelled: \(Task.isCancelled)")
            }
        }
        struct Producer: Service {
            let queue: Recorder<String>
            func run() async throws {
                queue.record("first")
                announceStarted()
                try await withGracefulShutdownHandler {
                    try await gracefulShutdown()
                } onGracefulShutdown: {
                    queue.record("handler saw the shutdown")
                }
                queue.record("last")
            }
        }
        let events = Recorder<ServiceGroup.Event>()
        let group = ServiceGroup([.init("drainer", Drainer(queue: queue, log: log)), .init("producer", Producer(queue: queue))],
                                 onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.lines == ["draining first,handler saw the shutdown,last cancelled: false"])
    }

    @Test func cancelWhenGracefulShutdownCancelsTheOperation() async throws {
        let log = Recorder<String>()
        struct Worker: Service {
            let log: Recorder<String>
            func run() async throws {
                announceStarted()
                let outcome = await (try? cancelWhenGracefulShutdown {
                    // Cancellation, brought by the graceful shutdown, ends this wait.
                    try await HeraldLifecycle.Gate().wait()
                    return "finished"
                }) ?? "cancelled"
                log.record(outcome)
            }
        }
        let events = Recorder<ServiceGroup.Event>()
        let group = ServiceGroup([.init("worker", Worker(log: log))], onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.lines == ["cancelled"])
    }

    @Test func theDurationStopsTheGroupOnceEveryServiceStarted() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        let clock = ManualClock()
        let group = ServiceGroup(Self.members(["a", "b"], log), stopAfter: .seconds(30), clock: clock, onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await clock.waitForSleepers(1)
        // The timer counts from when all started.
        #expect(events.lines == [.started])
        clock.advance(by: .seconds(30))
        try await run.value
        #expect(events.lines == [.started, .stopping(.timeElapsed)])
        #expect(Array(log.lines.suffix(2)) == ["stop b", "stop a"])
    }

    /// A service waiting for the whole group when the group stops while still starting: it is
    /// told in its turn, and ending then is no failure.
    @Test func stoppingWhileStartingReleasesServicesWaitingForTheGroupInTheirTurn() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        struct Patient: Service {
            let log: Recorder<String>
            func run() async throws {
                announceStarted()
                do {
                    try await waitUntilGroupStarted()
                    log.record("began work")
                } catch {
                    log.record("never began, shutting down: \(Task.isShuttingDownGracefully)")
                }
            }
        }
        struct NeverReady: Service {
            let log: Recorder<String>
            func run() async throws {
                log.record("starting")
                try? await gracefulShutdown()
                log.record("gave up starting")
            }
        }
        let group = ServiceGroup([.init("patient", Patient(log: log)), .init("slow", NeverReady(log: log))], onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await log.wait(for: "starting")
        run.cancel()
        try await run.value
        #expect(log.lines == ["starting", "gave up starting", "never began, shutting down: true"])
        #expect(events.lines == [.stopping(.cancelled)])
    }

    @Test func aGroupIsAServiceOfAnotherGroup() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        let inner = ServiceGroup(Self.members(["inner.a", "inner.b"], log))
        let outer = ServiceGroup(Self.members(["a"], log) + [.init("inner", inner)] + Self.members(["c"], log), onEvent: { events.record($0) })
        let run = Task { try await outer.run() }
        await events.wait(for: .started)
        run.cancel()
        try await run.value
        #expect(log.lines == ["start a", "ready a", "start inner.a", "ready inner.a", "start inner.b", "ready inner.b", "start c", "ready c",
                              "stop c", "stop inner.b", "stop inner.a", "stop a"])
    }
}

/// Real signals, raised in this process: one test at a time, on SIGUSR2, which nothing else
/// here traps.
@Suite(.serialized) struct ServiceGroupSignalTests {
    @Test func aSignalStopsTheGroupInReverseOrder() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        let group = ServiceGroup(ServiceGroupTests.members(["a", "b"], log), signals: [.sigusr2], onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        // The signals are trapped before the first service starts.
        await events.wait(for: .started)
        kill(getpid(), SIGUSR2)
        try await run.value
        #expect(events.lines == [.started, .stopping(.signal(.sigusr2))])
        #expect(Array(log.lines.suffix(2)) == ["stop b", "stop a"])
    }

    @Test func theSameSignalALittleLaterCancelsTheServicesInsteadOfWaiting() async throws {
        let log = Recorder<String>(), events = Recorder<ServiceGroup.Event>()
        /// Drains forever unless cancelled.
        struct Stuck: Service {
            let log: Recorder<String>
            func run() async throws {
                announceStarted()
                try await gracefulShutdown()
                log.record("draining")
                do { try await HeraldLifecycle.Gate().wait() } catch { log.record("cancelled while draining") }
            }
        }
        let clock = ManualClock()
        let group = ServiceGroup(ServiceGroupTests.members(["a"], log) + [.init("stuck", Stuck(log: log))], signals: [.sigusr2], clock: clock,
                                 onEvent: { events.record($0) })
        let run = Task { try await group.run() }
        await events.wait(for: .started)
        kill(getpid(), SIGUSR2)
        await log.wait(for: "draining")
        clock.advance(by: .seconds(1))
        kill(getpid(), SIGUSR2)
        try await run.value
        #expect(events.lines == [.started, .stopping(.signal(.sigusr2)), .stoppingAtOnce(.sigusr2)])
        #expect(Set(log.lines.suffix(2)) == ["cancelled while draining", "stop a (cancelled)"])
    }

    @Test func theSequenceDeliversARaisedSignalAgainAfterAnEarlierOneIsGone() async throws {
        for round in 1...2 {
            let signals = await UnixSignalsSequence(trapping: .sigusr2)
            kill(getpid(), SIGUSR2)
            var iterator = signals.makeAsyncIterator()
            #expect(await iterator.next() == .sigusr2, "round \(round)")
        }
    }
}
