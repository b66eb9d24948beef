import Herald

/// Turns an event into a ``LogRecord``, or nil when it does not know the event.
///
/// A log subscriber asks its summarizers in order and uses the first answer; events nobody
/// summarises are logged at `debug` with their topic. Summaries must never contain secrets.
public typealias EventSummarizer = @Sendable (Envelope<any Event>) -> LogRecord?

/// Summaries of the bus's own events.
public enum BusEventSummaries {
    /// `bus.subscriber.failed` (error), `bus.dropped` (warning), `bus.deadletter` (debug).
    public static let summarizer: EventSummarizer = { envelope in
        switch envelope.event {
        case let failed as SubscriberFailed:
            LogRecord(level: .error, message: "subscriber \(failed.subscription) failed on \(failed.eventTopic): \(failed.error)",
                      fields: [.init("subscription", failed.subscription), .init("event_topic", failed.eventTopic.name)])
        case let dropped as EventsDropped:
            LogRecord(level: .warning, message: "subscriber \(dropped.subscription) dropped \(dropped.count) events (\(dropped.total) in all)",
                      fields: [.init("subscription", dropped.subscription), .init("count", "\(dropped.count)")])
        case let dead as DeadLetter:
            LogRecord(level: .debug, message: "no subscriber for \(dead.eventTopic)",
                      fields: [.init("event_topic", dead.eventTopic.name)])
        default:
            nil
        }
    }
}
