import HeraldRuntime
import Testing

@Suite struct DurationTextTests {
    @Test(arguments: [("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("5m", .seconds(300)),
                      ("1h", .seconds(3600)), ("0ms", .zero)])
    func parsesTheFourUnits(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: ["30x", "", "s", "1.5s", "-1s", "5 m", "1d", "ms30", "9999999999s"])
    func refusesEverythingElse(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func formatsTheShortestExactSpelling() {
        #expect(DurationText.format(.milliseconds(250)) == "250ms")
        #expect(DurationText.format(.seconds(30)) == "30s")
        #expect(DurationText.format(.seconds(120)) == "2m")
        #expect(DurationText.format(.seconds(7200)) == "2h")
        #expect(DurationText.format(.milliseconds(1500)) == "1500ms")
    }
}
