import Foundation

/// The items the sandbox's feeds grow from, and the three documents written from them by
/// hand (no XML library: the sandbox shares no code with the client that parses them).
enum FeedFixtures {
    struct Item: Sendable {
        var index: Int
        var title: String
        var published: Date
        var author: String
    }

    static func item(at index: Int, start: Date, initial: Int, interval: TimeInterval) -> Item {
        let published = index < initial
            ? start.addingTimeInterval(Double(index - initial) * 60)
            : start.addingTimeInterval(Double(index - initial + 1) * interval)
        let text = TimelineFixtures.texts[index % TimelineFixtures.texts.count].replacingOccurrences(of: "\n", with: " ")
        return Item(index: index, title: "\(text) #\(index)", published: published, author: TimelineFixtures.person(at: index).name)
    }

    /// `&`, `<`, `>`, `"` and `'` escaped for XML text and attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    static func rss(_ items: [Item], origin: String) -> String {
        var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">
        <channel>
        <title>Herald sandbox news</title>
        <link>\(origin)/news</link>
        <description>Items that appear on the sandbox's clock</description>
        <atom:link href="\(origin)/feeds/news.rss" rel="self" type="application/rss+xml"/>

        """
        for item in items {
            let link = "\(origin)/news/\(item.index)"
            xml += """
            <item>
            <title>\(escape(item.title))</title>
            <link>\(link)</link>
            <guid isPermaLink="false">urn:herald-sandbox:news:\(item.index)</guid>
            <pubDate>\(rfc822(item.published))</pubDate>
            <dc:creator>\(escape(item.author))</dc:creator>
            <category>sandbox</category>
            <category>\(item.index % 2 == 0 ? "even" : "odd")</category>
            <description>\(escape("<p>Item <b>\(item.index)</b> of the sandbox: \(item.title)</p>"))</description>
            \(item.index % 3 == 0 ? "<enclosure url=\"\(origin)/media/\(item.index).mp3\" length=\"\(1000 + item.index)\" type=\"audio/mpeg\"/>" : "")
            </item>

            """
        }
        return xml + "</channel>\n</rss>\n"
    }

    static func atom(_ items: [Item], origin: String) -> String {
        var xml = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
        <title type="text">Herald sandbox news (Atom)</title>
        <id>urn:herald-sandbox:atom</id>
        <link rel="alternate" href="\(origin)/news"/>
        <link rel="self" href="\(origin)/feeds/news.atom"/>
        <updated>\(rfc3339(items.first?.published ?? Date(timeIntervalSince1970: 0)))</updated>

        """
        for item in items {
            xml += """
            <entry>
            <title type="html">\(escape(escape(item.title)))</title>
            <id>urn:herald-sandbox:entry:\(item.index)</id>
            <link rel="alternate" type="text/html" href="\(origin)/news/\(item.index)"/>
            \(item.index % 3 == 0 ? "<link rel=\"enclosure\" type=\"audio/mpeg\" length=\"\(1000 + item.index)\" href=\"\(origin)/media/\(item.index).mp3\"/>" : "")
            <published>\(rfc3339(item.published))</published>
            <updated>\(rfc3339(item.published))</updated>
            <author><name>\(escape(item.author))</name></author>
            <category term="sandbox"/>
            <summary type="html">\(escape("<p>Item <em>\(item.index)</em> of the sandbox: \(escape(item.title))</p>"))</summary>
            </entry>

            """
        }
        return xml + "</feed>\n"
    }

    /// RSS 1.0 with unusual prefixes, CDATA, references and comments: valid, but odd.
    static func oddRDF(_ items: [Item], origin: String) -> String {
        var xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <!-- The sandbox's odd feed: RSS 1.0 with the usual namespaces under unusual prefixes. -->
        <?xml-stylesheet type="text/xsl" href="/feeds/style.xsl"?>
        <r:RDF xmlns:r="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:d="http://purl.org/dc/elements/1.1/">
        <channel r:about="\(origin)/odd">
        <title>Odd &amp; valid &#x2014; the sandbox&#39;s RDF</title>
        <link>\(origin)/odd</link>
        <description><![CDATA[Feeds <b>can</b> look like this]]></description>
        </channel>

        """
        for item in items {
            let about = item.index % 4 == 1 ? "" : " r:about=\"urn:herald-sandbox:odd:\(item.index)\""
            xml += """
            <item\(about)>
            <!-- item \(item.index) -->
            <title><![CDATA[\(item.title.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>"))]]></title>
            <link>\(origin)/odd/\(item.index)</link>
            <description>Caf&#233; &amp; bar: <![CDATA[<i>CDATA</i> & HTML]]> &lt;b&gt;bold&lt;/b&gt; item \(item.index)</description>
            <d:date>\(rfc3339(item.published).replacingOccurrences(of: "Z", with: "+00:00"))</d:date>
            <d:creator>\(escape(item.author))</d:creator>
            <d:subject>odd</d:subject>
            </item>

            """
        }
        return xml + "</r:RDF>\n"
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ date: Date) -> String { formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'").string(from: date) }

    /// RSS's date, with a numeric zone: `Sun, 06 Nov 1994 08:49:37 +0000`.
    static func rfc822(_ date: Date) -> String { formatter("EEE, dd MMM yyyy HH:mm:ss '+0000'").string(from: date) }

    /// `1994-11-06T08:49:37Z`.
    static func rfc3339(_ date: Date) -> String { formatter("yyyy-MM-dd'T'HH:mm:ss'Z'").string(from: date) }
}
