/// The one place a `Duration` becomes a number of seconds or milliseconds, for APIs that take
/// those (`Date`, `poll(2)`, `URLRequest.timeoutInterval`, a millisecond jitter range).
extension Duration {
    /// The duration in seconds, as a floating-point value (what Foundation calls a
    /// `TimeInterval`); below a nanosecond it is approximate.
    public var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The whole milliseconds in the duration, rounded toward zero; clamped to `Int64`'s range.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = milliseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowed ? (seconds < 0 ? .min : .max) : sum
    }

    /// The whole nanoseconds in the duration, rounded toward zero; clamped to `Int64`'s range
    /// (JetStream's JSON durations are nanoseconds).
    public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (seconds < 0 ? .min : .max) : sum
    }

    /// The milliseconds in the duration rounded up, so that a wait of this many never ends
    /// before its time; 0 for a zero or negative duration, clamped to `Int64.max`.
    public var millisecondsRoundedUp: Int64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let (sum, overflowed) = milliseconds.addingReportingOverflow((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        return overflowed ? .max : sum
    }
}
