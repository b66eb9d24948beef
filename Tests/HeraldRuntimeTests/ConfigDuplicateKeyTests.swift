import Foundation
import HeraldRuntime
import Testing

/// config.json is read as text too: JSONSerialization and JSONDecoder cannot see a key written
/// twice (and keep the first), while every other JSON tool keeps the last.
@Suite struct ConfigDuplicateKeyTests {
    /// A small valid document with `extra` written into the console subscriber.
    static func document(console extra: String = "", loaders: String = #""images": {"kind": "tiqav", "service": "tiqav", "every": "5m"}"#) -> String {
        """
        {
          "services": {"tiqav": {"url": "sandbox"}},
          "loaders": {\(loaders)},
          "subscribers": {
            "console": {"kind": "log"\(extra)}
          }
        }
        """
    }

    @Test func theBaseDocumentIsValid() {
        #expect(ConfigFixtures.issues(Data(Self.document().utf8)) == [])
    }

    @Test func aKeyWrittenTwiceIsAnErrorWithItsPathAndBothPlaces() {
        let text = Self.document(console: #", "format": "text", "format": "json""#)
        #expect(ConfigFixtures.issues(Data(text.utf8)) == [
            "subscribers.console.format: duplicate key at line 5, column 50 (first at line 5, column 32); write it once"
        ])
    }

    @Test func duplicatesAreFoundAtEveryLevelAndInArrays() {
        let text = """
            {
              "services": {"tiqav": {"url": "sandbox"}},
              "loaders": {"images": {"kind": "tiqav", "service": "tiqav", "every": "5m"}},
              "subscribers": {
                "posts": {"kind": "post", "rules": {"r": {"on": "loader.images.finished", "service": "tiqav",
                  "when": [{"field": "loader", "exists": true}, {"field": "images", "field": "loader", "exists": true}]}}}
              },
              "loaders": {}
            }
            """
        #expect(ConfigFixtures.issues(Data(text.utf8)) == [
            "subscribers.posts.rules.r.when[1].field: duplicate key at line 6, column 73 (first at line 6, column 54); write it once",
            "loaders: duplicate key at line 8, column 3 (first at line 3, column 3); write it once",
        ])
    }

    @Test func escapedSpellingsOfTheSameKeyAreTheSameKey() {
        let text = Self.document(console: #", "level": "info", "lev\u0065l": "debug""#)
        let issues = ConfigFixtures.issues(Data(text.utf8))
        #expect(issues.count == 1)
        #expect(issues.first?.hasPrefix("subscribers.console.level: duplicate key at line 5") == true, "got \(issues)")
    }

    @Test func theSameKeyInSiblingObjectsAndInsideStringsIsNoDuplicate() {
        let loaders = #""a": {"kind": "tiqav", "service": "tiqav", "every": "5m"}, "b": {"kind": "tiqav", "service": "tiqav", "every": "5m", "query": "\"every\": \\"#
            + #"" }"#
        #expect(ConfigFixtures.issues(Data(Self.document(loaders: loaders).utf8)) == [])
    }

    @Test func aKeyWrittenThreeTimesIsReportedTwice() {
        let text = Self.document(console: #", "level": "info", "level": "info", "level": "info""#)
        #expect(ConfigFixtures.issues(Data(text.utf8)).count == 2)
    }

    @Test(arguments: [
        (#""level": "info","#, "subscribers.console: trailing comma at line 5, column 47; JSON allows none"),
        (#""topics": ["loader.>",]"#, "subscribers.console.topics: trailing comma at line 5, column 53; JSON allows none"),
    ])
    func aTrailingCommaIsAnErrorWithItsPathAndPlace(extra: String, expected: String) {
        let text = Self.document(console: ", " + extra)
        #expect(ConfigFixtures.issues(Data(text.utf8)) == [expected])
    }

    /// The scan stops at a depth no configuration has, instead of exhausting the stack.
    @Test func hostileNestingIsOneSyntaxErrorNotACrash() {
        let text = "{\"a\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        let issues = ConfigFixtures.issues(Data(text.utf8))
        #expect(issues.count == 1)
        #expect(issues.first?.hasPrefix("not valid JSON") == true, "got \(issues.first ?? "")")
    }

    @Test func aTrailingCommaAtTheEndOfTheDocumentNamesTheDocument() {
        let text = "{\"services\": {}, \"loaders\": {},}"
        #expect(ConfigFixtures.issues(Data(text.utf8)) == ["trailing comma at line 1, column 31; JSON allows none"])
    }
}
