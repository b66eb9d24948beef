import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSync
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

    /// Serves the RSS document of the ids set last (newest first), with no validators, so every
    /// load reads the whole feed.
    final class SettableFeed: HTTPTransport {
        private let ids = SyncLock<[String]>([])

        func set(_ ids: [String]) { self.ids.withLock { $0 = ids } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let items = ids.withLock { $0 }.map { "<item><guid>\($0)</guid><title>Item \($0)</title></item>" }.joined()
            let body = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Settable</title>"# + items + "</channel></rss>"
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/rss+xml"], body: Data(body.utf8))
        }
    }

    @Test func pastTheSeenLimitTheOldestIDsAreForgottenFirstAndThoseStillInTheFeedAreKept() async throws {
        try await LoaderHarness.run { harness in
            let feed = SettableFeed()
            let time = harness.time
            // Four ids remembered; the feed always shows three items, "pinned" last (the oldest).
            let loader = try FeedLoader(id: "bounded", url: URL(string: "https://feeds.example/rss")!,
                                        client: FeedClient(transport: feed, now: { time.now }), bus: harness.bus,
                                        stateStore: harness.store, seenLimit: 4)
            feed.set(["n2", "n1", "pinned"])
            #expect(await loader.load() == .finished(items: 3, new: 3))
            // Nine ids in all go past the limit of four; "pinned" stays in the feed throughout.
            for newest in 3...8 {
                feed.set(["n\(newest)", "n\(newest - 1)", "pinned"])
                #expect(await loader.load() == .finished(items: 3, new: 1), "load with n\(newest)")
            }
            let announced = harness.recorder.events(FeedItemsLoaded.self).flatMap { $0.newItems.map(\.id) }
            #expect(announced == ["n2", "n1", "pinned", "n3", "n4", "n5", "n6", "n7", "n8"])
            // What is remembered now: the four most recently seen, "pinned" among them.
            let saved = try String(contentsOf: harness.stateDirectory.appendingPathComponent("bounded.json"), encoding: .utf8)
            let state = try #require(try JSONSerialization.jsonObject(with: Data(saved.utf8)) as? [String: Any])
            #expect(state["seen"] as? [String] == ["n6", "pinned", "n7", "n8"], "\(saved)")
            // n5 left the feed before n6 did, so it was forgotten first: it is new again, n6 and
            // "pinned" are not.
            feed.set(["n6", "n5", "pinned"])
            #expect(await loader.load() == .finished(items: 3, new: 1))
            #expect(harness.recorder.events(FeedItemsLoaded.self).last?.newItems.map(\.id) == ["n5"])
        }
    }
}
