import Foundation

/// `--since` and `--until` of `herald replay`: an ISO 8601 time (`2026-12-01T08:00:00Z`, with
/// or without fractional seconds), a date (`2026-12-01`, midnight UTC) or a duration back from
/// now (`90m`, `2h`).
public struct ArchiveWindow: Sendable, Hashable {
    /// The earliest time included (nil: the archive's start).
    public var since: Date?
    /// The latest time included (nil: its end).
    public var until: Date?

    /// A window.
    public init(since: Date? = nil, until: Date? = nil) {
        self.since = since
        self.until = until
    }

    /// Whether `time` is in the window.
    public func contains(_ time: Date) -> Bool {
        if let since, time < since { return false }
        if let until, time > until { return false }
        return true
    }

    /// Reads a time as `--since`/`--until` take it; nil when it is none of the forms.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        if let time = parseTime(text) { return time }
        if let duration = DurationText.parse(text) {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return now.addingTimeInterval(-seconds)
        }
        return nil
    }

    /// An ISO 8601 time or date.
    static func parseTime(_ text: String) -> Date? {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime]
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }
}
