import HeraldSync
import Testing

/// The one Duration-to-number conversion every module uses.
@Suite struct DurationSecondsTests {
    @Test func secondsKeepTheFraction() {
        #expect(Duration.milliseconds(1_500).timeInterval == 1.5)
        #expect(Duration.seconds(-2).timeInterval == -2)
        #expect(Duration.zero.timeInterval == 0)
    }

    @Test func wholeMillisecondsRoundTowardZero() {
        #expect(Duration.microseconds(1_999).wholeMilliseconds == 1)
        #expect(Duration.seconds(90).wholeMilliseconds == 90_000)
        #expect(Duration.nanoseconds(999_999).wholeMilliseconds == 0)
    }

    @Test func roundedUpMillisecondsNeverEndAWaitEarly() {
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.milliseconds(3).millisecondsRoundedUp == 3)
        #expect(Duration.microseconds(3_001).millisecondsRoundedUp == 4)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect(Duration.seconds(-5).millisecondsRoundedUp == 0)
    }

    @Test func hugeDurationsClampInsteadOfTrapping() {
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == .min)
        #expect(Duration.seconds(Int64.max).millisecondsRoundedUp == .max)
    }
}
