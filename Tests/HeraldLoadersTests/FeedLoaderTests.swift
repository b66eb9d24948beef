import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import Testing

/// The feed loader against the sandbox's growing feeds, on the harness's test time.
@Suite struct FeedLoaderTests {
    static func loader(_ harness: LoaderHarness, _ path: String = "feeds/news.rss", id: String = "news",
                       store: (any LoaderStateStorage)? = nil) throws -> FeedLoader {
        let time = harness.time
        return try FeedLoader(id: id, url: harness.sandbox.baseURL.appendingPathComponent(path),
                              client: FeedClient(transport: harness.transport, now: { time.now }), bus: harness.bus,
                              stateStore: store ?? LoaderStateStore.none)
    }

    @Test func aFirstLoadAnnouncesTheFeedThenOnlyNewItemsAndA304IsNothingNew() async throws {
        try await LoaderHarness.run { harness in
            let loader = try Self.loader(harness)
            #expect(await loader.load() == .finished(items: 5, new: 5))
            #expect(await loader.load() == .finished(items: 0, new: 0))  // unchanged: 304
            harness.time.advance(by: 11)  // two more items
            #expect(await loader.load() == .finished(items: 7, new: 2))
            let events = harness.recorder.events(FeedItemsLoaded.self)
            #expect(harness.recorder.topics == ["loader.news.finished", "loader.news.finished", "loader.news.finished"])
            #expect(events[0].format == "rss" && events[0].title == "Herald sandbox news" && events[0].itemCount == 5)
            #expect(events[1].notModified && events[1].newItems.isEmpty)
            #expect(events[2].newItems.map(\.id) == ["urn:herald-sandbox:news:6", "urn:herald-sandbox:news:5"])
            let item = events[2].newItems[0]
            #expect(item.title?.hasSuffix("#6") == true && item.link?.hasSuffix("/news/6") == true)
            #expect(item.published != nil && item.author != nil && item.categories == ["sandbox", "even"])
            #expect(item.enclosures.first?.type == "audio/mpeg")
            #expect(item.summary?.contains("<") == false && item.summary?.contains("Item 6 of the sandbox") == true)
        }
    }

    @Test func aRestartAnnouncesNothingTwiceAndSendsTheSavedValidators() async throws {
        try await LoaderHarness.run { harness in
            let first = try Self.loader(harness, "feeds/odd.xml", id: "odd", store: harness.store)
            #expect(await first.load() == .finished(items: 5, new: 5))
            harness.time.advance(by: 5)
            let second = try Self.loader(harness, "feeds/odd.xml", id: "odd", store: harness.store)
            #expect(await second.load() == .finished(items: 6, new: 1))
            let third = try Self.loader(harness, "feeds/odd.xml", id: "odd", store: harness.store)
            #expect(await third.load() == .finished(items: 0, new: 0))
            #expect(harness.recorder.events(FeedItemsLoaded.self).last?.notModified == true)
            let saved = try String(contentsOf: harness.stateDirectory.appendingPathComponent("odd.json"), encoding: .utf8)
            #expect(saved.contains("\"etag\"") && saved.contains("odd.xml-6"))
        }
    }

    @Test func aPermanentMoveIsInTheEvent() async throws {
        try await LoaderHarness.run { harness in
            let loader = try Self.loader(harness, "feeds/moved.rss", id: "moved")
            #expect(await loader.load() == .finished(items: 5, new: 5))
            let event = try #require(harness.recorder.events(FeedItemsLoaded.self).first)
            #expect(event.movedTo == harness.sandbox.baseURL.appendingPathComponent("feeds/news.rss").absoluteString)
        }
    }

    @Test func aRateLimitIsAFailedLoadWithItsRetryTime() async throws {
        try await LoaderHarness.run { harness in
            try harness.sandbox.script(path: "/feeds/news.rss", [.status(429)])
            let loader = try Self.loader(harness)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("the load did not fail")
                return
            }
            #expect(error.isRateLimited && error.retryAt != nil)
            let failed = try #require(harness.recorder.events(LoadFailed.self).first)
            #expect(failed.kind == "feed" && failed.loader == "news")
            // The next load reads the feed whole: nothing was saved by the failure.
            #expect(await loader.load() == .finished(items: 5, new: 5))
        }
    }

    @Test func aFeedThatIsAWebPageFailsWithADecodingError() async throws {
        try await LoaderHarness.run { harness in
            let loader = try Self.loader(harness, "feeds/missing.rss", id: "missing")
            guard case .failed(let error) = await loader.load() else {
                Issue.record("the load did not fail")
                return
            }
            #expect(error.status == 404)
        }
    }
}
