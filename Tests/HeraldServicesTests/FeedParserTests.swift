import Foundation
import Testing

@testable import HeraldServices

/// The feed parser on the three formats and on the bad input feeds meet in the wild.
@Suite struct FeedParserTests {
    static let rss2 = """
    <?xml version="1.0" encoding="UTF-8"?>
    <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
    <channel><title>Example &amp; Co</title><link>https://example.com/</link>
    <item>
      <title>First &amp;amp; best</title>
      <link>https://example.com/1</link>
      <guid isPermaLink="false">tag:example.com,2026:1</guid>
      <pubDate>Wed, 02 Oct 2002 13:00:00 GMT</pubDate>
      <dc:creator>Ada</dc:creator>
      <category>news</category><category>swift</category>
      <enclosure url="https://example.com/1.mp3" length="1234" type="audio/mpeg"/>
      <description><![CDATA[<p>Hello <b>world</b> &amp; friends</p><script>alert(1)</script>]]></description>
    </item>
    <item>
      <title>Second</title>
      <link>https://example.com/2</link>
      <description>&lt;p&gt;Escaped &lt;i&gt;HTML&lt;/i&gt;&lt;/p&gt;</description>
    </item>
    </channel></rss>
    """

    @Test func readsRSS2ItemsWithEveryField() throws {
        let document = try FeedParser.parse(Data(Self.rss2.utf8))
        #expect(document.format == .rss2)
        #expect(document.title == "Example & Co")
        #expect(document.link == "https://example.com/")
        #expect(document.items.count == 2)
        let first = document.items[0]
        #expect(first.id == "tag:example.com,2026:1")
        #expect(first.title == "First & best")
        #expect(first.link == "https://example.com/1")
        #expect(first.published?.timeIntervalSince1970 == 1_033_563_600)
        #expect(first.author == "Ada")
        #expect(first.categories == ["news", "swift"])
        #expect(first.enclosures == [FeedEnclosure(url: "https://example.com/1.mp3", type: "audio/mpeg", length: 1234)])
        #expect(first.summary == "Hello world & friends")
        #expect(document.items[1].id == "https://example.com/2")
        #expect(document.items[1].summary == "Escaped HTML")
    }

    @Test func readsRSS1WithRDFAboutAndDublinCore() throws {
        let xml = """
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
          <channel rdf:about="https://example.org/"><title>RDF site</title><link>https://example.org/</link></channel>
          <item rdf:about="https://example.org/a"><title>A</title><link>https://example.org/a</link>
            <dc:date>2026-12-02T09:00:00+09:00</dc:date><dc:creator>Bo</dc:creator><dc:subject>misc</dc:subject>
            <description>Plain</description></item>
        </rdf:RDF>
        """
        let document = try FeedParser.parse(Data(xml.utf8))
        #expect(document.format == .rss1)
        #expect(document.title == "RDF site")
        let item = try #require(document.items.first)
        #expect(item.id == "https://example.org/a")
        #expect(item.published == FeedDates.parse("2026-12-02T00:00:00Z"))
        #expect(item.author == "Bo" && item.categories == ["misc"] && item.summary == "Plain")
    }

    @Test func readsAtomWithAlternateLinksAuthorsAndXHTMLContent() throws {
        let xml = """
        <feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Atom &lt;3</title>
          <link rel="self" href="https://example.net/feed"/><link href="https://example.net/"/>
          <entry><id>urn:uuid:1</id><title type="html">&lt;b&gt;Bold&lt;/b&gt; move</title>
            <link rel="enclosure" href="https://example.net/v.mp4" type="video/mp4" length="99"/>
            <link rel="alternate" href="https://example.net/1"/>
            <updated>2026-01-01T00:00:00Z</updated><published>2025-12-31T23:00:00z</published>
            <author><name>Cy</name><email>cy@example.net</email></author>
            <category term="t1" label="Topic one"/><category term="t2"/>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>One</p><p>Two</p></div></content>
          </entry>
        </feed>
        """
        let document = try FeedParser.parse(Data(xml.utf8))
        #expect(document.format == .atom)
        #expect(document.title == "Atom <3")
        #expect(document.link == "https://example.net/")
        let entry = try #require(document.items.first)
        #expect(entry.id == "urn:uuid:1")
        #expect(entry.title == "Bold move")
        #expect(entry.link == "https://example.net/1")
        #expect(entry.published == FeedDates.parse("2025-12-31T23:00:00Z"))
        #expect(entry.author == "Cy")
        #expect(entry.categories == ["Topic one", "t2"])
        #expect(entry.enclosures == [FeedEnclosure(url: "https://example.net/v.mp4", type: "video/mp4", length: 99)])
        #expect(entry.summary == "One Two")
    }

    @Test func anHTMLPageIsRefusedAsAPageNotAFeed() throws {
        for page in ["<!DOCTYPE html><html><head><title>x</title></head><body><p>Hi<br></body></html>",
                     "\n<html lang=en><body>not closed", "<html><body><p>x</p></body></html>"] {
            let error = try #require(throws: ServiceError.self) { try FeedParser.parse(Data(page.utf8)) }
            #expect(error.kind == .decoding)
            #expect(error.message.contains("HTML page, not a feed"), "\(error)")
        }
    }

    @Test func anotherRootElementIsNamed() throws {
        let error = try #require(throws: ServiceError.self) { try FeedParser.parse(Data("<statuses><status/></statuses>".utf8)) }
        #expect(error.message.contains("root element is <statuses>"))
    }

    @Test func truncatedXMLIsRefusedWithWhereItStopped() throws {
        let cut = String(Self.rss2.prefix(Self.rss2.count / 2))
        let error = try #require(throws: ServiceError.self) { try FeedParser.parse(Data(cut.utf8)) }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("truncated") || error.message.contains("malformed"), "\(error)")
        #expect(error.location?.hasPrefix("line ") == true)
    }

    @Test func billionLaughsIsRefusedBeforeParsing() throws {
        var xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [\n<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            xml += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        xml += "]>\n<rss><channel><item><title>&lol9;</title><guid>x</guid></item></channel></rss>"
        let error = try #require(throws: ServiceError.self) { try FeedParser.parse(Data(xml.utf8)) }
        #expect(error.location == "DOCTYPE")
        #expect(error.message.contains("declares entities"))
    }

    @Test func anItemWithoutGuidOrLinkGetsADigestOfTitleAndDate() throws {
        let xml = """
        <rss><channel>
        <item><title>Only a title</title><pubDate>Mon, 01 Dec 2026 10:00:00 +0000</pubDate></item>
        <item><title>Only a title</title><pubDate>Mon, 01 Dec 2026 10:00:00 +0000</pubDate></item>
        <item><description>   </description></item>
        </channel></rss>
        """
        let document = try FeedParser.parse(Data(xml.utf8))
        #expect(document.items.count == 1)
        #expect(document.items[0].id.hasPrefix("sha1:") && document.items[0].id.count == 45)
        #expect(document.duplicateItems == 1)
        #expect(document.itemsWithoutID == 1)
        // The same item in another document gets the same id.
        #expect(try FeedParser.parse(Data(xml.utf8)).items[0].id == document.items[0].id)
    }

    @Test func duplicateGuidsInOneDocumentKeepTheFirst() throws {
        let xml = "<rss><channel><item><guid>a</guid><title>1</title></item><item><guid>a</guid><title>2</title></item><item><guid>b</guid></item></channel></rss>"
        let document = try FeedParser.parse(Data(xml.utf8))
        #expect(document.items.map(\.id) == ["a", "b"])
        #expect(document.items[0].title == "1")
        #expect(document.duplicateItems == 1)
    }

    @Test func anOverlongIDIsReplacedByItsDigest() throws {
        let long = String(repeating: "x", count: 300)
        let document = try FeedParser.parse(Data("<rss><channel><item><guid>\(long)</guid></item></channel></rss>".utf8))
        #expect(document.items[0].id.hasPrefix("sha1:") && document.items[0].id.utf8.count <= 256)
    }

    @Test func charsetComesFromTheDeclarationOrElseTheContentType() throws {
        let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><item><guid>1</guid><title>Caf\u{E9}</title></item></channel></rss>"
        let declared = try FeedParser.parse(try #require(latin1.data(using: .isoLatin1)))
        #expect(declared.items[0].title == "Café")
        let bare = "<rss><channel><item><guid>1</guid><title>Caf\u{E9} \u{2013}</title></item></channel></rss>"
        let fromHeader = try FeedParser.parse(try #require(bare.data(using: .windowsCP1252)), contentType: "application/rss+xml; charset=\"windows-1252\"")
        #expect(fromHeader.items[0].title == "Café –")
        let latin1Bare = "<rss><channel><item><guid>1</guid><title>Caf\u{E9}</title></item></channel></rss>"
        let error = try #require(throws: ServiceError.self) {
            try FeedParser.parse(try #require(latin1Bare.data(using: .isoLatin1)))
        }
        #expect(error.message.contains("not valid UTF-8"))
        let unknown = try #require(throws: ServiceError.self) {
            try FeedParser.parse(Data("<?xml version='1.0' encoding='klingon-8'?><rss/>".utf8))
        }
        #expect(unknown.message.contains("klingon-8"))
    }

    @Test func oddButValidXMLReadsAsPlainText() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <!-- comment --><?pi data?>
        <x:rss xmlns:x="urn:whatever" version="2.0"><x:channel>
        <x:item><x:guid>g</x:guid><x:title><![CDATA[A ]]]]><![CDATA[> B]]></x:title>
        <x:description>Caf&#233; &#x2014; <![CDATA[<i>it</i> & more]]></x:description></x:item>
        </x:channel></x:rss>
        """
        let item = try #require(try FeedParser.parse(Data(xml.utf8)).items.first)
        #expect(item.title == "A ]]> B")
        #expect(item.summary == "Café — it & more")
    }

    @Test func anHTMLEntityInAFeedIsNamed() throws {
        let error = try #require(throws: ServiceError.self) {
            try FeedParser.parse(Data("<rss><channel><item><guid>1</guid><title>a&nbsp;b</title></item></channel></rss>".utf8))
        }
        #expect(error.message.contains("entity XML does not define") || error.message.contains("malformed XML"), "\(error)")
        #expect(error.location?.hasPrefix("line 1") == true)
    }

    @Test func anEmptyOrNonXMLBodyIsNamed() throws {
        #expect(throws: ServiceError.self) { try FeedParser.parse(Data()) }
        let error = try #require(throws: ServiceError.self) { try FeedParser.parse(Data("{\"items\": []}".utf8)) }
        #expect(error.message.contains("not XML"))
    }
}

@Suite struct FeedDatesTests {
    @Test func rfc822WithOddZones() {
        let utc = FeedDates.parse("Wed, 02 Oct 2002 13:00:00 GMT")
        #expect(utc?.timeIntervalSince1970 == 1_033_563_600)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 08:00:00 EST") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 09:00:00 EDT") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 06:00:00 PDT") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 22:00:00 JST") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 22:00:00 +0900") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 22:00:00 +09:00") == utc)
        #expect(FeedDates.parse("02 Oct 2002 13:00 UT") == utc)
        #expect(FeedDates.parse("Wednesday, 2 October 02 13:00:00 Z") == utc)
        #expect(FeedDates.parse("Wed, 02 oct 2002 13:00:00 z") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 13:00:00") == utc)
        #expect(FeedDates.parse("Wed, 02 Oct 2002 13:00:00 A") == utc)  // military: -0000 per RFC 2822
        #expect(FeedDates.parse("Wed, 02 Oct 2002 13:00:00 XYZT") == nil)
        #expect(FeedDates.parse("Wed, 32 Oct 2002 13:00:00 GMT") == nil)
        #expect(FeedDates.parse("yesterday") == nil)
    }

    @Test func rfc3339() {
        let expected = FeedDates.parse("Wed, 02 Oct 2002 13:00:00 GMT")
        #expect(FeedDates.parse("2002-10-02T13:00:00Z") == expected)
        #expect(FeedDates.parse("2002-10-02t13:00:00z") == expected)
        #expect(FeedDates.parse("2002-10-02T08:00:00-05:00") == expected)
        #expect(FeedDates.parse("2002-10-02T13:00:00.250Z")?.timeIntervalSince1970 == 1_033_563_600.25)
        #expect(FeedDates.parse("2002-10-02")?.timeIntervalSince1970 == 1_033_516_800)
        #expect(FeedDates.parse("2002-13-02T13:00:00Z") == nil)
    }
}
