import Foundation

/// Serves feeds that grow on the sandbox's clock, each in its own dialect:
/// - `/feeds/news.rss`: RSS 2.0 with guids, enclosures, categories and `dc:creator`;
/// - `/feeds/news.atom`: Atom 1.0 with `published`, `author`, HTML summaries;
/// - `/feeds/odd.xml`: RSS 1.0 (RDF) that is odd but valid: CDATA sections, character and
///   entity references, the RSS and Dublin Core namespaces bound to unusual prefixes, comments,
///   a processing instruction, an item without `rdf:about` identified by its link alone;
/// - `/feeds/moved.rss`: a permanent redirect (301) to `/feeds/news.rss`.
///
/// Each answer carries `ETag` (changing with the item count) and `Last-Modified` (the newest
/// item's date); `If-None-Match` or `If-Modified-Since` that still match get 304 without a body.
/// The newest ``windowSize`` items are shown, newest first.
struct FeedEmulator: Sendable {
    /// The most items a feed shows.
    static let windowSize = 20

    let configuration: SandboxConfiguration
    let start: Date

    init(configuration: SandboxConfiguration) {
        self.configuration = configuration
        self.start = configuration.now()
    }

    /// Whether `path` is one of this emulator's.
    static func handles(_ path: String) -> Bool { path.hasPrefix("/feeds/") }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        let origin = "http://" + (request.header("Host") ?? "127.0.0.1")
        guard request.method == "GET" || request.method == "HEAD" else {
            return SandboxResponse(status: 405, headers: [("Allow", "GET, HEAD")], body: Data())
        }
        let count = itemCount(now: configuration.now())
        let items = (max(0, count - Self.windowSize)..<count).reversed().map { FeedFixtures.item(at: $0, start: start,
                                                                                                    initial: configuration.initialFeedItems,
                                                                                                    interval: configuration.feedInterval) }
        let body: String
        let contentType: String
        switch request.path {
        case "/feeds/news.rss":
            body = FeedFixtures.rss(items, origin: origin)
            contentType = "application/rss+xml; charset=utf-8"
        case "/feeds/news.atom":
            body = FeedFixtures.atom(items, origin: origin)
            contentType = "application/atom+xml"
        case "/feeds/odd.xml":
            body = FeedFixtures.oddRDF(items, origin: origin)
            contentType = "application/rdf+xml"
        case "/feeds/moved.rss":
            return SandboxResponse(status: 301, headers: [("Location", origin + "/feeds/news.rss")], body: Data())
        default:
            return SandboxResponse(status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data("no such feed\n".utf8))
        }
        let etag = "\"\(request.path.dropFirst("/feeds/".count))-\(count)\""
        let newest = items.first?.published ?? start
        let lastModified = FeedFixtures.httpDate(newest)
        let validators = [("ETag", etag), ("Last-Modified", lastModified)]
        if let match = request.header("If-None-Match") {
            if match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
                return SandboxResponse(status: 304, headers: validators, body: Data())
            }
        } else if let since = request.header("If-Modified-Since"), since == lastModified {
            return SandboxResponse(status: 304, headers: validators, body: Data())
        }
        return SandboxResponse(status: 200, headers: [("Content-Type", contentType)] + validators, body: Data(body.utf8))
    }

    /// Items that exist by `now`: the initial ones, then one per interval.
    func itemCount(now: Date) -> Int {
        let elapsed = max(0, now.timeIntervalSince(start))
        let interval = configuration.feedInterval
        let beats = interval > 0 && elapsed.isFinite ? min(1_000_000, (elapsed / interval).rounded(.down)) : 0
        return max(0, configuration.initialFeedItems) + Int(beats)
    }
}
