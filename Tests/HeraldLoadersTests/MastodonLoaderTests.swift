import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSync
import HeraldTesting
import Testing

/// Rewrites requests and responses of a real transport: a server that ignores `min_id`, or
/// answers a page with repeated ids.
struct RewritingTransport: HTTPTransport {
    let base: any HTTPTransport
    var request: @Sendable (HTTPRequest) -> HTTPRequest = { $0 }
    var response: @Sendable (HTTPResponse) -> HTTPResponse = { $0 }

    func send(_ original: HTTPRequest) async throws -> HTTPResponse {
        response(try await base.send(request(original)))
    }
}

@Suite struct MastodonLoaderTests {
    @Test func aFirstLoadAnnouncesThePageThenOnlyWhatIsNewer() async throws {
        try await LoaderHarness.run { harness in
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(), request: .init(timeline: .home, limit: 10), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 10, new: 10))
            harness.time.advance(by: 15)  // three more statuses
            #expect(await loader.load() == .finished(items: 3, new: 3))
            #expect(await loader.load() == .finished(items: 0, new: 0))
            let events = harness.recorder.events(MastodonStatusesLoaded.self)
            #expect(harness.recorder.topics == ["loader.masto.finished", "loader.masto.finished", "loader.masto.finished"])
            #expect(events[0].timeline == "home" && events[0].newStatuses == events[0].statuses)
            #expect(harness.transport.queryValues("min_id") == [nil, events[0].statuses.first?.id, events[1].statuses.first?.id])
            #expect(events[1].newStatuses.allSatisfy { !$0.text.contains("<p>") && !$0.text.contains("<a ") && $0.text.contains("#herald") })
            #expect(events[1].rateLimitRemaining != nil)
        }
    }

    @Test func moreNewStatusesThanAPageHoldsAreReadOverLoadsWithoutAGap() async throws {
        try await LoaderHarness.run { harness in
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(), request: .init(limit: 5), bus: harness.bus)
            _ = await loader.load()
            harness.time.advance(by: 5 * 12)
            #expect(await loader.load() == .finished(items: 5, new: 5))
            #expect(await loader.load() == .finished(items: 5, new: 5))
            #expect(await loader.load() == .finished(items: 2, new: 2))
            let announced = harness.recorder.events(MastodonStatusesLoaded.self).dropFirst().flatMap(\.newStatuses).map(\.id)
            #expect(Set(announced).count == 12)
        }
    }

    @Test func aRestartGoesOnFromTheSavedCursor() async throws {
        try await LoaderHarness.run { harness in
            let first = try MastodonLoader(id: "masto", client: harness.mastodon(), bus: harness.bus, stateStore: harness.store)
            #expect(await first.load() == .finished(items: 20, new: 20))
            let restarted = try MastodonLoader(id: "masto", client: harness.mastodon(), bus: harness.bus, stateStore: harness.store)
            #expect(await restarted.load() == .finished(items: 0, new: 0))
            #expect(harness.transport.queryValues("min_id").last == harness.recorder.events(MastodonStatusesLoaded.self).first?.statuses.first?.id)
        }
    }

    @Test func repeatedIdsAndAServerIgnoringMinIDAnnounceNothingTwice() async throws {
        try await LoaderHarness.run { harness in
            let sloppy = RewritingTransport(base: harness.transport, request: { request in
                var copy = request
                var parts = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
                let kept = parts?.queryItems?.filter { $0.name != "min_id" }
                parts?.queryItems = kept
                if let url = parts?.url { copy.url = url }
                return copy
            }, response: { response in
                // Every status twice.
                guard let array = try? JSONSerialization.jsonObject(with: response.body) as? [Any],
                      let doubled = try? JSONSerialization.data(withJSONObject: array + array) else { return response }
                var copy = response
                copy.body = doubled
                return copy
            })
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(transport: sloppy), request: .init(limit: 5), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 5, new: 5))
            harness.time.advance(by: 10)
            #expect(await loader.load() == .finished(items: 5, new: 2))
            let events = harness.recorder.events(MastodonStatusesLoaded.self)
            #expect(Set(events.flatMap(\.newStatuses).map(\.id)).count == 7)
            #expect(events.allSatisfy { Set($0.statuses.map(\.id)).count == $0.statuses.count })
        }
    }

    @Test func anEmptyPageKeepsTheCursor() async throws {
        try await LoaderHarness.run { harness in
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(), request: .init(timeline: .hashtag("sandbox"), limit: 3),
                                            bus: harness.bus, stateStore: harness.store)
            _ = await loader.load()
            #expect(await loader.load() == .finished(items: 0, new: 0))
            #expect(await loader.load() == .finished(items: 0, new: 0))
            let cursors = harness.transport.queryValues("min_id")
            #expect(cursors[1] != nil && cursors[1] == cursors[2])
        }
    }

    @Test func aRevokedTokenFailsOnceClearlyAndSendsNothingMore() async throws {
        try await LoaderHarness.run { harness in
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(token: "revoked"), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a failed load")
                return
            }
            #expect(error.kind == LoadError.unauthorizedKind && error.status == 401 && error.stopsLoader)
            #expect(error.message.contains("The access token is invalid") && error.message.contains("loader masto stops"))
            #expect(!error.message.contains("revoked"))
            #expect(await loader.load() == .failed(error))
            #expect(harness.transport.queryValues("limit").count == 1)  // one request, not two
            let failures = harness.recorder.events(LoadFailed.self)
            #expect(failures.count == 2 && failures.allSatisfy { $0.kind == "mastodon" && $0.error.kind == "unauthorized" })
        }
    }
}

/// A Mastodon 429 through the loader and its schedule, on a manual clock: the pause comes from
/// the answer's `X-RateLimit-Reset`, not from a fixed interval or the backoff.
@Suite struct MastodonLoaderRateLimitTests {
    /// A manual clock's offset in seconds.
    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func a429WithAResetMakesTheNextLoadWaitUntilTheReset() async throws {
        try await LoaderHarness.run { harness in
            let start = harness.time.now
            let clock = ManualClock()
            // One time for all: the schedule's wall clock, and the sandbox's (kept level before each load).
            let now: @Sendable () -> Date = { start.addingTimeInterval(Self.seconds(clock.now.offset)) }
            let loader = try MastodonLoader(id: "masto", client: harness.mastodon(), request: .init(limit: 5), bus: harness.bus)
            try harness.sandbox.script(path: "/api/v1/timelines/home", [.status(429)])
            let loads = SyncLock<[(at: Duration, outcome: LoadOutcome)]>([])
            // An hour between successful loads, a 2 s backoff after other failures: neither is 1.25 s.
            let policy = SchedulePolicy(interval: .seconds(3_600), backoffInitial: .seconds(2), rateLimitMargin: .milliseconds(250))
            let schedule = LoaderSchedule(policy: policy, clock: clock, now: now) {
                harness.time.advance(by: now().timeIntervalSince(harness.time.now))
                let outcome = await loader.load()
                loads.withLock { $0.append((clock.now.offset, outcome)) }
                return outcome
            }
            let task = Task { await schedule.run() }
            await clock.waitForSleepers()
            guard case .failed(let refused)? = loads.withLock({ $0.first?.outcome }) else {
                Issue.record("the first load did not fail: \(loads.withLock { $0 })")
                task.cancel()
                return
            }
            #expect(refused.isRateLimited && refused.status == 429)
            // The sandbox's reset is a second after its now, written in ISO 8601 as Mastodon does.
            #expect(refused.retryAt == start.addingTimeInterval(1))
            #expect(clock.nextDeadline?.offset == .milliseconds(1_250), "the next load waits for the reset plus the margin")
            #expect(harness.recorder.topics == ["loader.masto.failed"])

            clock.advanceToNextDeadline()
            await clock.waitForSleepers()
            let second = loads.withLock { $0.dropFirst().first }
            #expect(second?.at == .milliseconds(1_250))
            #expect(second?.outcome.succeeded == true)
            #expect(harness.recorder.topics == ["loader.masto.failed", "loader.masto.finished"])
            task.cancel()
            await task.value
        }
    }

    @Test func aResetInThePastWaitsAWholeWindowNotASecond() async throws {
        try await LoaderHarness.run { harness in
            // The client's clock is an hour ahead of the sandbox's: the reset it is given looks past.
            let ahead: @Sendable () -> Date = { harness.time.now.addingTimeInterval(3600) }
            let loader = try MastodonLoader(id: "masto", client: harness.base.mastodon(transport: harness.transport, now: ahead),
                                            request: .init(limit: 5), bus: harness.bus)
            try harness.sandbox.script(path: "/api/v1/timelines/home", [.status(429)])
            guard case .failed(let refused) = await loader.load() else {
                Issue.record("expected a rate-limit failure")
                return
            }
            #expect(refused.isRateLimited)
            // One window of the documented /api/* limit (300 requests per 5 minutes) from now.
            #expect(refused.retryAt == ahead().addingTimeInterval(MastodonClient.assumedRateLimitWindow))
            #expect(await loader.load().succeeded)
        }
    }
}
