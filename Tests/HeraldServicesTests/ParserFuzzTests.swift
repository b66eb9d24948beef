import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldServices

/// Thousands of random and mutated bodies: the parsers must answer with a value or a
/// `.decoding` error, never crash and never hang.
@Suite struct ParserFuzzTests {
    private static let tokens = ["{", "}", "[", "]", ",", ":", "\"", "null", "true", "1e999", "-0", "\\u00", "\u{0}",
                                 "<", ">", "</", "/>", "&amp;", "&#x", "<![CDATA[", "]]>", "<status>", "<statuses>", "日本", "🎉"]

    private static func mutate(_ seed: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        switch random.next() % 6 {
        case 0:
            return (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 1:
            return Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
        default:
            for _ in 0..<(1 + random.next() % 8) where !bytes.isEmpty {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: index)
                case 2: bytes.insert(contentsOf: Array(tokens[Int(random.next() % UInt64(tokens.count))].utf8), at: index)
                default:
                    let end = min(bytes.count, index + Int(random.next() % 40))
                    bytes.insert(contentsOf: bytes[index..<end], at: index)
                }
            }
            return bytes
        }
    }

    @Test(.timeLimit(.minutes(5))) func jsonParserOnlyThrowsDecodingErrors() {
        var random = SeededGenerator(seed: 0x4845_5241_4C44)
        let seeds = [Array(Fixtures.timelineJSON.utf8), Array(#"{"results":[{"_id":"a","description":"x"}],"count":1}"#.utf8),
                     Array(#"[{"id":"3om","ext":"jpg","width":1,"height":2}]"#.utf8)]
        var unexpected: [String] = []
        for round in 0..<3000 {
            let body = Data(Self.mutate(seeds[round % seeds.count], &random))
            do {
                switch round % 3 {
                case 0: _ = try JSONBodyDecoder.decode([Status].self, from: body)
                case 1: _ = try JSONBodyDecoder.decode(BaaSQueryResult.self, from: body)
                default: _ = try JSONBodyDecoder.decode([TiqavImage].self, from: body)
                }
            } catch let error as ServiceError where error.kind == .decoding {
                continue
            } catch {
                unexpected.append("round \(round): \(error)")
            }
        }
        #expect(unexpected.isEmpty)
    }

    @Test(.timeLimit(.minutes(5))) func xmlParserOnlyThrowsDecodingErrors() {
        var random = SeededGenerator(seed: 0x584D_4C)
        let seed = Array(Fixtures.timelineXML.utf8)
        var parsed = 0
        var unexpected: [String] = []
        for round in 0..<3000 {
            let body = Data(Self.mutate(seed, &random))
            do {
                _ = try TimelineXMLParser.parse(body)
                parsed += 1
            } catch let error as ServiceError where error.kind == .decoding {
                continue
            } catch {
                unexpected.append("round \(round): \(error)")
            }
        }
        #expect(unexpected.isEmpty)
        #expect(parsed > 0, "some mutations (e.g. in skipped elements) should still parse")
    }
}

extension ParserFuzzTests {
    @Test(.timeLimit(.minutes(5))) func feedParserOnlyThrowsDecodingErrors() {
        var random = SeededGenerator(seed: 0x4645_4544)
        let atom = """
            <?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title type="html">&lt;b&gt;A&lt;/b&gt;</title>
            <entry><id>urn:1</id><title>x</title><link href="https://e/1"/><published>2026-01-01T00:00:00Z</published>
            <author><name>n</name></author><content type="xhtml"><div><p>a</p></div></content></entry></feed>
            """
        let rdf = """
            <?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <item rdf:about="https://e/a"><title><![CDATA[c]]></title><dc:date>2026-12-02T09:00:00+09:00</dc:date></item></rdf:RDF>
            """
        let seeds = [Array(FeedParserTests.rss2.utf8), Array(atom.utf8), Array(rdf.utf8),
                     Array("<!DOCTYPE rss [<!ENTITY a \"b\">]><rss><channel><item><guid>&a;</guid></item></channel></rss>".utf8)]
        var parsed = 0
        var unexpected: [String] = []
        for round in 0..<3000 {
            let body = Data(Self.mutate(seeds[round % seeds.count], &random))
            do {
                _ = try FeedParser.parse(body, contentType: round % 5 == 0 ? "text/xml; charset=iso-8859-1" : nil)
                parsed += 1
            } catch where error.kind == .decoding {
                continue
            } catch {
                unexpected.append("round \(round): \(error)")
            }
        }
        #expect(unexpected.isEmpty)
        #expect(parsed > 0)
    }
}
