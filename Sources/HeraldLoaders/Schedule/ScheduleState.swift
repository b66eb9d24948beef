import Foundation

/// The decision part of a schedule: given how a load ended, how long to pause before the next.
///
/// - finished: ``SchedulePolicy/interval`` plus a jitter in `0...jitter` (whole milliseconds);
///   the failure count resets;
/// - rate limited: until the reset time plus ``SchedulePolicy/rateLimitMargin`` (or
///   ``SchedulePolicy/rateLimitFallback`` without a reset time); not counted as a failure;
/// - any other failure: `backoffInitial × 2^(n-1)` for the n-th failure in a row, at most
///   ``SchedulePolicy/backoffMax``.
public struct ScheduleState: Sendable {
    /// The policy.
    public let policy: SchedulePolicy
    /// Failures in a row so far (rate limits excluded).
    public private(set) var consecutiveFailures = 0
    private var random: SeededRandomNumberGenerator

    /// Creates the state; `seed` fixes the jitter sequence.
    public init(policy: SchedulePolicy, seed: UInt64) {
        self.policy = policy
        self.random = SeededRandomNumberGenerator(seed: seed)
    }

    /// The pause after `outcome`, at wall-clock time `now` (used for rate-limit resets).
    public mutating func pause(after outcome: LoadOutcome, now: Date) -> Duration {
        switch outcome {
        case .finished:
            consecutiveFailures = 0
            return policy.interval + drawJitter()
        case .failed(let error) where error.isRateLimited:
            guard let reset = error.retryAt else { return policy.rateLimitFallback }
            let wait = max(0, reset.timeIntervalSince(now))
            return .milliseconds(Int64((wait * 1000).rounded(.up))) + policy.rateLimitMargin
        case .failed:
            consecutiveFailures += 1
            var pause = policy.backoffInitial
            for _ in 1..<consecutiveFailures where pause < policy.backoffMax {
                pause *= 2
            }
            return min(pause, policy.backoffMax)
        }
    }

    private mutating func drawJitter() -> Duration {
        let limit = policy.jitter.wholeMilliseconds
        guard limit > 0 else { return .zero }
        return .milliseconds(Int64.random(in: 0...limit, using: &random))
    }
}
