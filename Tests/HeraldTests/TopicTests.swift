import Herald
import Testing

@Suite struct TopicTests {
    @Test(arguments: [
        ("", "a topic has at least one token"),
        ("loader..finished", "token 2 is empty"),
        (".loader", "token 1 is empty"),
        ("loader.", "token 2 is empty"),
        ("loader.*.failed", "token 2 is the wildcard '*', which only patterns may use"),
        ("loader.>", "token 2 is the wildcard '>', which only patterns may use"),
        ("loader.ho me", "token 2 ('ho me') contains white space"),
        ("a*b", "token 1 ('a*b') contains '*'"),
        ("tab\there", "token 1 ('tab\there') contains white space"),
        ("bell\u{7}", "token 1 ('bell\u{7}') contains a control character (U+7)"),
    ])
    func invalidTopicIsAThrownErrorWithTheReason(name: String, reason: String) {
        #expect(throws: EventBusError.self) { try Topic(validating: name) }
        do {
            _ = try Topic(validating: name)
        } catch {
            #expect(error.code == .invalidTopic)
            #expect(error.description == "invalid topic \"\(name)\": \(reason)")
        }
    }

    @Test func validTopicsKeepTheirTokens() throws {
        let topic = try Topic(validating: "loader.home.finished")
        #expect(topic.tokens == ["loader", "home", "finished"])
        #expect(topic.isValid)
        #expect(topic == "loader.home.finished")
        #expect(try Topic(tokens: "loader", "ホーム", "finished").name == "loader.ホーム.finished")
    }

    @Test(arguments: [
        ("", "a pattern has at least one token"),
        ("loader.>.failed", "'>' may only be the last token, found at token 2 of 3"),
        ("loader.a*", "token 2 ('a*') contains '*' inside a token (a wildcard must be a whole token)"),
        ("loader..x", "token 2 is empty"),
        ("a b", "token 1 ('a b') contains white space"),
    ])
    func invalidPatternIsAThrownErrorWithTheReason(pattern: String, reason: String) {
        do {
            _ = try TopicPattern(validating: pattern)
            Issue.record("\(pattern) was accepted")
        } catch {
            #expect(error.code == .invalidPattern)
            #expect(error.description == "invalid topic pattern \"\(pattern)\": \(reason)")
        }
    }

    @Test(arguments: [
        ("loader.*.failed", "loader.home.failed", true),
        ("loader.*.failed", "loader.home.finished", false),
        ("loader.*.failed", "loader.failed", false),
        ("loader.*.failed", "loader.a.b.failed", false),
        ("loader.>", "loader.home", true),
        ("loader.>", "loader.home.finished", true),
        ("loader.>", "loader", false),
        (">", "bus.dropped", true),
        ("*", "bus", true),
        ("*", "bus.dropped", false),
        ("*.*", "bus.dropped", true),
        ("bus.subscriber.failed", "bus.subscriber.failed", true),
        ("bus.subscriber.failed", "bus.subscriber", false),
        ("*.subscriber.>", "bus.subscriber.failed", true),
    ])
    func patternsMatchAsInNATS(pattern: String, topic: String, matches: Bool) throws {
        let compiled = try TopicPattern(validating: pattern)
        #expect(compiled.matches(try Topic(validating: topic)) == matches)
    }

    @Test func invalidLiteralTopicIsRefusedWhenPublished() {
        let bus = EventBus()
        #expect(!Topic("bad topic").isValid)
        do {
            try bus.post(Note(topic: "bad topic"))
            Issue.record("an invalid topic was published")
        } catch {
            #expect(error.code == .invalidTopic)
            #expect(error.description.contains("white space"))
        }
    }

    @Test func invalidLiteralPatternIsRefusedWhenSubscribed() {
        let bus = EventBus()
        do {
            _ = try bus.subscribe(matching: "loader.>.x") { _ in }
            Issue.record("an invalid pattern was accepted")
        } catch {
            #expect(error.code == .invalidPattern)
        }
    }

    @Test func topicsAndPatternsRoundTripThroughJSONAndRejectBadOnes() throws {
        let topic = try Topic(validating: "loader.home.finished")
        let data = try JSONEncoder().encode([topic])
        #expect(String(decoding: data, as: UTF8.self) == #"["loader.home.finished"]"#)
        #expect(try JSONDecoder().decode([Topic].self, from: data) == [topic])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Topic].self, from: Data(#"["a..b"]"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([TopicPattern].self, from: Data(#"[">.a"]"#.utf8)) }
    }
}

import Foundation

/// `TopicPatternIndex`: the bus's trie for other code (the status endpoint's `/events` clients).
@Suite struct TopicPatternIndexTests {
    @Test func aTopicFindsTheValuesOfItsMatchingPatternsVisitingOnlyItsBranches() throws {
        let index = TopicPatternIndex<String>()
        try index.insert("exact", for: "loader.home.finished")
        try index.insert("one", for: "loader.*.finished")
        try index.insert("rest", for: "loader.>")
        try index.insert("other", for: "post.>")
        for n in 0..<1000 { try index.insert("idle\(n)", for: TopicPattern(validating: "idle.\(n).>")) }
        #expect(index.count == 1004)

        var found: [String] = []
        let visited = index.match("loader.home.finished", into: &found)
        #expect(found.sorted() == ["exact", "one", "rest"])
        // root, loader, home, finished, *, finished: the 1,000 idle patterns are not looked at.
        #expect(visited == 6)

        found = []
        index.match("loader.home.failed", into: &found)
        #expect(found == ["rest"])
        found = []
        index.match("loader", into: &found)
        #expect(found.isEmpty, "> needs one more token")

        #expect(index.remove(for: "loader.*.finished") { $0 == "one" })
        #expect(!index.remove(for: "loader.*.finished") { $0 == "one" })
        found = []
        index.match("loader.home.finished", into: &found)
        #expect(found.sorted() == ["exact", "rest"])
        #expect(throws: EventBusError.self) { try index.insert("bad", for: "a..b") }
        #expect(index.count == 1003)
    }
}
