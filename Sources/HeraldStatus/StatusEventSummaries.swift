import HeraldSubscribers

/// Log summaries of the status endpoint's events: a dropped `/events` client as a warning.
public enum StatusEventSummaries {
    /// `status.events.dropped` (warning); nil for anything else.
    public static let summarizer: EventSummarizer = { envelope in
        guard let dropped = envelope.event as? StatusStreamDropped else { return nil }
        let filters = dropped.filters.isEmpty ? "every topic" : dropped.filters.joined(separator: ", ")
        return LogRecord(
            level: .warning,
            message: "/events client #\(dropped.client) (\(filters)) dropped: it did not read, and \(dropped.bufferedBytes) bytes waited (bound \(dropped.limit))",
            fields: [.init("client", "\(dropped.client)"), .init("buffered", "\(dropped.bufferedBytes)"), .init("limit", "\(dropped.limit)")])
    }
}
