/// When a loader runs: at start, then every ``interval`` (plus up to ``jitter``), backing off
/// exponentially after failures, and waiting for the reset after a rate-limit refusal.
public struct SchedulePolicy: Sendable, Hashable {
    /// The pause between successful loads.
    public var interval: Duration
    /// Up to this much is added to each pause, drawn from the schedule's seeded generator.
    public var jitter: Duration
    /// The pause after the first failure in a row; doubled after each further failure.
    public var backoffInitial: Duration
    /// The longest pause after failures.
    public var backoffMax: Duration
    /// Added to a rate limit's reset time, so the next request falls in the new window.
    public var rateLimitMargin: Duration
    /// The pause after a rate-limit refusal that names no reset time.
    public var rateLimitFallback: Duration

    /// Creates a policy.
    public init(interval: Duration, jitter: Duration = .zero, backoffInitial: Duration = .seconds(2),
                backoffMax: Duration = .seconds(300), rateLimitMargin: Duration = .seconds(1),
                rateLimitFallback: Duration = .seconds(900)) {
        self.interval = interval
        self.jitter = jitter
        self.backoffInitial = backoffInitial
        self.backoffMax = backoffMax
        self.rateLimitMargin = rateLimitMargin
        self.rateLimitFallback = rateLimitFallback
    }
}
