import Foundation

/// The rate-limit state a service reported with `x-rate-limit-*` headers.
public struct RateLimit: Sendable, Hashable {
    /// Requests allowed per window.
    public var limit: Int?
    /// Requests left in this window.
    public var remaining: Int?
    /// When the window resets.
    public var reset: Date?

    /// Creates a rate-limit state.
    public init(limit: Int? = nil, remaining: Int? = nil, reset: Date? = nil) {
        self.limit = limit
        self.remaining = remaining
        self.reset = reset
    }

    /// Reads `x-rate-limit-limit`, `-remaining` and `-reset` (epoch seconds), falling back to
    /// `Retry-After` (seconds or an HTTP date) for the reset; nil when none is present.
    public init?(headers: HTTPHeaders, now: Date = Date()) {
        let limit = headers["x-rate-limit-limit"].flatMap { Int($0.trimmed) }
        let remaining = headers["x-rate-limit-remaining"].flatMap { Int($0.trimmed) }
        // Only plain finite numbers: `Double` also reads "inf" and "nan".
        func seconds(_ text: String?) -> Double? {
            guard let text, let value = Double(text.trimmed), value.isFinite, abs(value) < 1e12 else { return nil }
            return value
        }
        var reset = seconds(headers["x-rate-limit-reset"]).map { Date(timeIntervalSince1970: $0) }
        if reset == nil, let retryAfter = headers["retry-after"]?.trimmed {
            if let seconds = seconds(retryAfter) {
                reset = now.addingTimeInterval(seconds)
            } else {
                reset = ServiceDates.parseHTTP(retryAfter)
            }
        }
        if limit == nil && remaining == nil && reset == nil { return nil }
        self.init(limit: limit, remaining: remaining, reset: reset)
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
