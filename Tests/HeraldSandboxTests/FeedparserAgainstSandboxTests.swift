import Foundation
import HeraldSync
import HeraldTestSupport
import Testing

@testable import HeraldSandbox

/// feedparser (pinned in .ci/python-clients.txt), an independent reader, reads the sandbox's
/// three feeds: their format, items, ids, links, dates and authors, the odd feed's CDATA and
/// references, and the conditional GET (304 with the ETag it was given). The script fails (and
/// so the test) when feedparser calls a feed malformed ("bozo").
@Suite struct FeedparserAgainstSandboxTests {
    static let script = #"""
import json, sys
import feedparser

base = sys.argv[1]
report = {}
for name in ["news.rss", "news.atom", "odd.xml"]:
    d = feedparser.parse(base + "/feeds/" + name)
    assert not d.bozo, (name, repr(d.bozo_exception))
    again = feedparser.parse(base + "/feeds/" + name, etag=d.etag, modified=d.modified)
    report[name] = {
        "version": d.version, "status": d.status, "etag": d.etag, "again": again.status,
        "title": d.feed.title,
        "ids": [e.get("id") for e in d.entries],
        "links": [e.link for e in d.entries],
        "titles": [e.title for e in d.entries],
        "published": [bool(e.get("published_parsed") or e.get("updated_parsed")) for e in d.entries],
        "authors": [e.get("author") for e in d.entries],
        "summary": d.entries[0].summary if d.entries else None,
        "enclosures": sum(len(e.get("enclosures", [])) for e in d.entries),
    }
print(json.dumps(report))
"""#

    struct Feed: Decodable {
        var version: String
        var status: Int
        var etag: String
        var again: Int
        var title: String
        var ids: [String?]
        var links: [String]
        var titles: [String]
        var published: [Bool]
        var authors: [String?]
        var summary: String?
        var enclosures: Int
    }

    @Test(.enabled(if: !PythonClients.skipped, "HERALD_SKIP_PYTHON_CLIENTS=1"))
    func feedparserReadsTheSandboxsRSSAtomAndOddFeeds() async throws {
        // The clock stands still, so a feed cannot grow between the two reads.
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        var configuration = SandboxConfiguration(now: { start })
        configuration.initialFeedItems = 6
        let sandbox = try await Sandbox.start(configuration)
        defer { Task { await sandbox.stop() } }
        let output = try await PythonClients.run(Self.script, [sandbox.baseURL.absoluteString])
        try #require(output.status == 0, "feedparser failed: \(output.stderr)")
        let report = try JSONDecoder().decode([String: Feed].self, from: Data(output.stdout.utf8))

        let rss = try #require(report["news.rss"])
        #expect(rss.version == "rss20" && rss.status == 200 && rss.again == 304)
        #expect(rss.ids == (0..<6).reversed().map { "urn:herald-sandbox:news:\($0)" })
        #expect(rss.links.first == sandbox.baseURL.absoluteString + "/news/5")
        #expect(rss.titles.first?.hasSuffix("#5") == true && rss.titles.contains { $0.contains("Fish & chips <3") })
        #expect(rss.published.allSatisfy { $0 } && rss.authors.allSatisfy { $0 != nil })
        #expect(rss.enclosures == 2)

        let atom = try #require(report["news.atom"])
        #expect(atom.version == "atom10" && atom.again == 304)
        #expect(atom.ids == (0..<6).reversed().map { "urn:herald-sandbox:entry:\($0)" })
        // An Atom title of type html comes back from feedparser as (sanitised) HTML.
        #expect(atom.titles.contains { $0.contains("Fish &amp; chips &lt;3") }, "\(atom.titles)")
        #expect(atom.published.allSatisfy { $0 } && atom.authors.allSatisfy { $0 != nil })

        let odd = try #require(report["odd.xml"])
        #expect(odd.version == "rss10" && odd.again == 304)
        #expect(odd.title == "Odd & valid — the sandbox's RDF")
        #expect(odd.titles.count == 6 && odd.titles.first?.hasSuffix("#5") == true)
        #expect(odd.summary?.contains("Café & bar") == true && odd.summary?.contains("CDATA") == true)
    }

    @Test func theFeedsGrowOnTheSandboxsClockWithNewValidators() async throws {
        let time = SyncLock(Date(timeIntervalSince1970: 1_780_000_000))
        var configuration = SandboxConfiguration(now: { time.withLock { $0 } })
        configuration.initialFeedItems = 2
        configuration.feedInterval = 10
        let sandbox = try await Sandbox.start(configuration)
        defer { Task { await sandbox.stop() } }
        let url = sandbox.baseURL.appendingPathComponent("feeds/news.rss").absoluteString
        let first = try await Curl.run(["-s", "-i", url])
        time.withLock { $0 += 25 }
        let second = try await Curl.run(["-s", "-i", url])
        let etag = { (text: String) in text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") } }
        #expect(first.stdout.components(separatedBy: "<item>").count - 1 == 2)
        #expect(second.stdout.components(separatedBy: "<item>").count - 1 == 4)
        #expect(etag(first.stdout) != nil && etag(first.stdout) != etag(second.stdout))
        let unchanged = try await Curl.run(["-s", "-i", "-H", "If-None-Match: \"news.rss-4\"", url])
        #expect(unchanged.stdout.hasPrefix("HTTP/1.1 304"))
    }
}
