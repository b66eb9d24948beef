import Herald
import HeraldTestSupport
import Testing
import HeraldTesting

@Suite struct ShutdownTests {
    @Test func shutdownDrainsEveryMailboxThenRefusesPublishes() async throws {
        let bus = EventBus()
        let slow = Recording<Int>(), stream = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self, delivery: .queued()) { slow.append($0.number) }
        let events = try bus.events(of: Tick.self)
        let reader = Task {
            for await tick in events { stream.append(tick.number) }
            return "ended"
        }
        for number in 0..<100 { try bus.post(Tick(number: number)) }
        let report = await bus.shutdown(timeout: .seconds(3_600))
        #expect(report.drained)
        #expect(report.totalDiscarded == 0)
        #expect(slow.values == Array(0..<100))
        #expect(await reader.value == "ended", "a stream ends after its queued events")
        #expect(stream.values == Array(0..<100))
        do {
            try bus.post(Tick(number: 100))
            Issue.record("published after shutdown")
        } catch {
            #expect(error.code == .shutDown)
        }
        #expect(throws: EventBusError.self) { _ = try bus.subscribe(to: Tick.self) { _ in } }
        withExtendedLifetime(token) {}
    }

    @Test func shutdownReportsWhatItHadToDiscardAtTheDeadline() async throws {
        let bus = EventBus()
        let clock = ManualClock()
        // Nobody reads this stream: its events cannot drain.
        let stuck = try bus.events(of: Tick.self, name: "stuck")
        let received = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self, delivery: .queued()) { received.append($0.number) }
        for number in 0..<10 { try bus.post(Tick(number: number)) }
        let shutdown = Task { await bus.shutdown(deadline: clock.now.advanced(by: .seconds(5)), clock: clock) }
        await clock.waitForSleepers()
        do {
            try bus.post(Tick(number: 10))
            Issue.record("published while shutting down")
        } catch {
            #expect(error.code == .shutDown)
        }
        clock.advance(by: .seconds(5))
        let report = await shutdown.value
        #expect(!report.drained)
        #expect(report.discarded == [.init(subscriptionID: stuck.subscription.id, subscription: "stuck", count: 10)])
        #expect(report.totalDiscarded == 10)
        #expect(received.values == Array(0..<10), "the other subscriber drained in time")
        withExtendedLifetime(token) {}
    }

    @Test(.timeLimit(.minutes(5)))
    func aStreamThatHandedOutEverythingDoesNotHoldUpShutdown() async throws {
        let bus = EventBus()
        let clock = ManualClock()
        let stream = try bus.events(of: Tick.self)
        try bus.post(Tick(number: 1))
        try bus.post(Tick(number: 2))
        for await tick in stream where tick.number == 2 { break }
        // The deadline never comes (the manual clock does not move): shutdown must finish
        // because nothing is left to deliver, not because time ran out.
        let report = await bus.shutdown(deadline: clock.now.advanced(by: .seconds(1)), clock: clock)
        #expect(report.drained)
        #expect(report.discarded.isEmpty)
        withExtendedLifetime(stream) {}
    }

    @Test func shutdownFromACancelledTaskStillDrains() async throws {
        let bus = EventBus()
        let received = Recording<Int>()
        let token = try bus.subscribe(to: Tick.self, delivery: .queued()) { received.append($0.number) }
        for number in 0..<200 { try bus.post(Tick(number: number)) }
        let stopping = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await bus.shutdown(timeout: .seconds(3_600))
        }
        let report = await stopping.value
        #expect(report.drained)
        #expect(received.values == Array(0..<200))
        withExtendedLifetime(token) {}
    }

    @Test func secondShutdownReturnsAtOnce() async {
        let bus = EventBus()
        _ = await bus.shutdown()
        let again = await bus.shutdown()
        #expect(again.drained)
    }
}

/// Regression: shutdown used to count finished publishes of any kind, so a report the bus posted
/// while draining could complete the count while an accepted publish was still waiting for room;
/// the mailboxes were then finished under that publish, whose event was discarded.
@Suite struct ShutdownAccountingTests {
    @Test(.timeLimit(.minutes(5)))
    func aReportPostedWhileDrainingDoesNotStandInForAnAcceptedPublish() async throws {
        let bus = EventBus()
        let clock = ManualClock()
        let order = Recording<String>()
        // An inline observer before the stream in delivery order: seeing tick 1 means its
        // publish has been accepted and is about to wait for room.
        let accepted = Recording<Int>()
        let observer = try bus.subscribe(to: Tick.self) { accepted.append($0.number) }
        // A stream of capacity 1 that waits when full: the second publish waits for room.
        let ticks = try bus.events(of: Tick.self, capacity: 1, overflow: .wait)
        // A stream that dropped an event: its iterator reports the drop when it next reads,
        // which the test makes it do while the bus drains.
        let lossy = try bus.events(of: LoadFinished.self, capacity: 1, overflow: .dropNewest)
        let reports = Recording<Int>()
        let watcher = try bus.subscribe(to: EventsDropped.self) { reports.append($0.count) }

        try bus.post(Tick(number: 0))
        try bus.post(LoadFinished(loader: "home", count: 1))
        try bus.post(LoadFinished(loader: "home", count: 2))   // dropped, not yet reported
        let waiting = Task {
            try await bus.publish(Tick(number: 1))
            order.append("tick 1 published")
        }
        #expect(await accepted.wait(forCount: 2))
        let shutdown = Task { await bus.shutdown(deadline: clock.now.advanced(by: .seconds(60)), clock: clock) }
        await clock.waitForSleepers()
        var lossyReader = lossy.makeAsyncIterator()
        #expect(await lossyReader.next()?.count == 1)   // reports the drop: a bus event while draining
        #expect(await reports.wait(forCount: 1))

        var iterator = ticks.makeAsyncIterator()
        #expect(await iterator.next()?.number == 0)
        try await waiting.value
        #expect(await iterator.next()?.number == 1, "the accepted publish was delivered, not discarded")
        let report = await shutdown.value
        #expect(report.drained)
        #expect(report.discarded.isEmpty)
        #expect(order.values == ["tick 1 published"])
        withExtendedLifetime((watcher, observer)) {}
    }
}
