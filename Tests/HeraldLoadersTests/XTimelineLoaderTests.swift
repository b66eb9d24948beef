import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSync
import Testing

/// The X API v2 timeline loader announces what the v1.1 one does, from the v2 endpoints.
@Suite struct XTimelineLoaderTests {
    @Test func homeTimelineAnnouncesTimelineLoadedWithAuthorsAndAsksSinceTheNewest() async throws {
        try await LoaderHarness.run { harness in
            let loader = try XTimelineLoader(id: "home", client: harness.x(), request: .init(maxResults: 10), bus: harness.bus,
                                             stateStore: harness.store, now: { harness.time.now })
            #expect(await loader.load() == .finished(items: 10, new: 10))
            harness.time.advance(by: 3 * harness.sandbox.configuration.statusInterval)
            #expect(await loader.load() == .finished(items: 3, new: 3))
            #expect(harness.recorder.topics == ["loader.home.finished", "loader.home.finished"])
            let events = harness.recorder.events(TimelineLoaded.self)
            #expect(events[0].newStatuses == events[0].statuses)
            #expect(events[0].statuses.allSatisfy { !$0.user.screenName.isEmpty && !$0.user.name.isEmpty })
            #expect(events[0].rateLimitRemaining == 14)
            // The user id is asked once; then only the timeline, since the newest seen.
            #expect(harness.transport.paths == ["/2/users/me", "/2/users/1/timelines/reverse_chronological",
                                                "/2/users/1/timelines/reverse_chronological"])
            #expect(harness.transport.queryValues("since_id") == [nil, nil, events[0].statuses.first?.id])
            #expect(harness.transport.queryValues("expansions").last == "author_id")
            // The marker survives a restart.
            let restarted = try XTimelineLoader(id: "home", client: harness.x(), request: .init(maxResults: 10), bus: harness.bus,
                                                stateStore: harness.store)
            #expect(await restarted.load() == .finished(items: 0, new: 0))
        }
    }

    @Test func aBurstLargerThanAPageIsReadAcrossPages() async throws {
        try await LoaderHarness.run { harness in
            let loader = try XTimelineLoader(id: "home", client: harness.x(), request: .init(maxResults: 2), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 2, new: 2))
            harness.time.advance(by: 5 * harness.sandbox.configuration.statusInterval)
            #expect(await loader.load() == .finished(items: 5, new: 5))
            let second = harness.recorder.events(TimelineLoaded.self)[1]
            #expect(Set(second.newStatuses.map(\.id)).count == 5)
            #expect(harness.transport.queryValues("pagination_token").compactMap { $0 }.count == 2)
        }
    }

    @Test func aFirstLoadReadsOnePageOnly() async throws {
        try await LoaderHarness.run { harness in
            let loader = try XTimelineLoader(id: "home", client: harness.x(), request: .init(maxResults: 5), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 5, new: 5))
            #expect(harness.transport.queryValues("pagination_token").allSatisfy { $0 == nil })
        }
    }

    @Test func userAndSearchTimelines() async throws {
        try await LoaderHarness.run { harness in
            let user = try XTimelineLoader(id: "sakura", client: harness.x(), request: .init(timeline: .user(username: "sakura_dev"), maxResults: 5),
                                           bus: harness.bus)
            guard case .finished(let items, _) = await user.load() else { Issue.record("expected a finished load"); return }
            #expect(items > 0)
            #expect(harness.recorder.events(TimelineLoaded.self)[0].statuses.allSatisfy { $0.user.screenName == "sakura_dev" })
            let search = try XTimelineLoader(id: "ramen", client: harness.x(), request: .init(timeline: .search(query: "ラーメン")), bus: harness.bus)
            guard case .finished(let found, _) = await search.load() else { Issue.record("expected a finished load"); return }
            #expect(found > 0)
            #expect(harness.recorder.events(TimelineLoaded.self)[1].statuses.allSatisfy { $0.text.contains("ラーメン") })
        }
    }

    @Test func a401StopsTheLoaderAfterOneClearEvent() async throws {
        try await LoaderHarness.run { harness in
            let loader = try XTimelineLoader(id: "home", client: harness.x(bearer: "revoked"), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else { Issue.record("expected a failure"); return }
            #expect(error.status == 401)
            #expect(error.message.contains("no more requests"))
            let requests = harness.sandbox.requestsReceived
            #expect(await loader.load() == .failed(error))
            #expect(await loader.load() == .failed(error))
            #expect(harness.sandbox.requestsReceived == requests)
            #expect(await loader.isStopped)
            #expect(harness.recorder.topics == ["loader.home.failed"])
            #expect(harness.recorder.events(LoadFailed.self).first?.error.message.contains("revoked") == true)
        }
    }

    @Test func aRateLimitResetInThePastWaitsAndBacksOff() async throws {
        try await LoaderHarness.run { harness in
            // The loader's clock is an hour ahead of the sandbox's: every reset it gives looks past.
            let ahead: @Sendable () -> Date = { harness.time.now.addingTimeInterval(3600) }
            let loader = try XTimelineLoader(id: "home", client: harness.x(), bus: harness.bus, now: ahead)
            try harness.sandbox.script(path: "/2/users/me", [.status(429), .status(429)])
            guard case .failed(let first) = await loader.load(), case .failed(let second) = await loader.load() else {
                Issue.record("expected two rate-limit failures")
                return
            }
            #expect(first.isRateLimited && second.isRateLimited)
            #expect(first.retryAt == ahead().addingTimeInterval(60))
            #expect(second.retryAt == ahead().addingTimeInterval(120))
            #expect(await loader.load().succeeded)
        }
    }

    @Test func anEmptyPageAnnouncesNothingNew() async throws {
        try await LoaderHarness.run { harness in
            let loader = try XTimelineLoader(id: "home", client: harness.x(), request: .init(maxResults: 3), bus: harness.bus)
            _ = await loader.load()
            #expect(await loader.load() == .finished(items: 0, new: 0))
            #expect(harness.recorder.events(TimelineLoaded.self).last?.statuses.isEmpty == true)
        }
    }
}

/// Answers every timeline request with the same page and a `next_token`: a service that repeats ids.
private struct RepeatingTransport: HTTPTransport {
    let requests = SyncCounter()

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.increment()
        let body = request.url.path == "/2/users/me"
            ? #"{"data":{"id":"1","name":"Me","username":"me"}}"#
            : #"{"data":[{"id":"900","text":"again","author_id":"7","created_at":"2026-01-01T00:00:00.000Z"},{"id":"899","text":"and again","author_id":"7","created_at":"2026-01-01T00:00:00.000Z"}],"includes":{"users":[{"id":"7","name":"Seven","username":"seven"}]},"meta":{"result_count":2,"next_token":"more"}}"#
        return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
    }
}

final class SyncCounter: Sendable {
    private let value = SyncLock(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

@Suite struct XTimelinePagingTests {
    @Test func aPageThatRepeatsIdsEndsThePaging() async throws {
        let transport = RepeatingTransport()
        let client = XClient(baseURL: URL(string: "http://x.invalid")!, authorization: .bearer("t"), transport: transport)
        let bus = EventBus()
        let store = InMemoryStateStore(sinceID: "100")
        let loader = try XTimelineLoader(id: "home", client: client, request: .init(maxResults: 2, maxPages: 50), bus: bus, stateStore: store)
        #expect(await loader.load() == .finished(items: 2, new: 2))
        // users/me, the first page, and one more page whose ids all repeat: then it stops.
        #expect(transport.requests.count == 3)
    }
}

/// A state store holding one marker in memory.
private struct InMemoryStateStore: LoaderStateStorage {
    let sinceID: String
    func load(_ id: String) async -> LoaderStateStore.ReadResult { .loaded(LoaderState(sinceID: sinceID)) }
    func save(_ state: LoaderState, for id: String) async throws(LoaderStateStoreError) {}
    var location: String { "memory" }
}
