import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
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
