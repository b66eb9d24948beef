import Foundation
import Herald
import HeraldLifecycle
import HeraldSync

/// Writes one line per event to a ``LogWriter``: human-readable text (the default), `logfmt`
/// or JSON, filtered by topic patterns and a minimum level, secrets masked by a ``Redactor``.
///
/// It subscribes once to every topic with a batch mailbox, so logging never slows a publisher
/// and lines come in publication order; what waited in the mailbox is formatted and handed to
/// the writer at once, and the next batch waits for the writer (whose blocking writes run on a
/// thread of its own). Library code: it writes only to the writer it is given.
public final class LogSubscriber: Sendable {
    /// Its name on the bus (stats, failure events).
    public let name: String
    /// The topics it logs.
    public let patterns: [TopicPattern]
    /// The lowest level it logs.
    public let level: LogLevel
    private let formatter: LogLineFormatter
    private let writer: any LogWriter
    private let summarizers: [EventSummarizer]
    private let redactor: Redactor
    /// Whether a run is in progress: a second one would subscribe twice and log every line twice.
    private let running = SyncLock(false)

    /// Creates a subscriber; nothing is logged until ``run(on:)``.
    ///
    /// - Parameters:
    ///   - summarizers: asked in order; ``SinkEventSummaries`` and ``BusEventSummaries`` are
    ///     always asked last.
    public init(name: String = "log", patterns: [TopicPattern] = [.all], level: LogLevel = .info,
                format: LogFormat = .text, writer: any LogWriter, summarizers: [EventSummarizer] = [],
                redactor: Redactor = Redactor()) {
        self.name = name
        self.patterns = patterns
        self.level = level
        self.formatter = LogLineFormatter(format: format)
        self.writer = writer
        self.summarizers = summarizers + [SinkEventSummaries.summarizer, BusEventSummaries.summarizer]
        self.redactor = redactor
    }

    /// Logs `bus`'s events until it is asked to stop: subscribes, announces that it started and
    /// waits. Asked to shut down gracefully, it ends the subscription after writing what waits
    /// in its mailbox (a reload that replaces it loses no line); cancelled, it drops what waits.
    /// It runs once at a time; once a run ended, it may run again.
    ///
    /// - Throws: ``EventBusError`` when the bus refuses the subscription; ``LogSubscriberError``
    ///   when the subscriber runs already.
    public func run(on bus: EventBus) async throws {
        let first = running.withLock { running in
            defer { running = true }
            return !running
        }
        guard first else { throw LogSubscriberError(subscriber: name) }
        defer { running.withLock { $0 = false } }
        let subscription = try bus.subscribeInBatches(matching: .all, name: name, capacity: 4096, overflow: .wait) {
            [self] batch in
            var lines: [String] = []
            for envelope in batch { if let line = line(for: envelope) { lines.append(line) } }
            await writer.write(lines)
        }
        announceStarted()
        if (try? await gracefulShutdown()) != nil {
            await subscription.drain()
        } else {
            subscription.cancel()
        }
    }

    /// Reopens its writer's file (see ``LogWriter/reopen()``).
    public func reopen() async {
        await writer.reopen()
    }

    /// Writes the line for one envelope, if it passes the filters.
    public func log(_ envelope: Envelope<any Event>) async {
        if let line = line(for: envelope) { await writer.write([line]) }
    }

    /// The line for one envelope (redacted), or nil when the filters leave it out.
    public func line(for envelope: Envelope<any Event>) -> String? {
        guard patterns.contains(where: { $0.matches(envelope.topic) }) else { return nil }
        guard let record = record(for: envelope), record.level >= level else { return nil }
        let line = formatter.line(time: envelope.timestamp, topic: envelope.topic.name,
                                  sender: envelope.sender?.id, record: record)
        return redactor.redact(line)
    }

    private func record(for envelope: Envelope<any Event>) -> LogRecord? {
        for summarizer in summarizers {
            if let record = summarizer(envelope) { return record }
        }
        return LogRecord(level: .debug, message: "\(type(of: envelope.event))")
    }
}

/// Why a ``LogSubscriber`` did not run: a run of it is in progress.
public struct LogSubscriberError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The subscriber's name.
    public var subscriber: String

    /// A refusal of subscriber `subscriber`'s second run.
    public init(subscriber: String) {
        self.subscriber = subscriber
    }

    /// `log subscriber log: already running; a subscriber runs once at a time`.
    public var description: String {
        "log subscriber \(subscriber): already running; a subscriber runs once at a time"
    }
}
