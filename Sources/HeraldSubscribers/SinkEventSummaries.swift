import Herald

/// Summaries of the repairs made when an append-only file is opened: a ``FileSinkTornLine``
/// from a file sink (`sink.<name>.torn`) or a post scheduler's outbox
/// (`sink.<subscriber>.outbox.torn`), logged as warnings naming both files.
public enum SinkEventSummaries {
    /// `sink.<name>.torn` (warning); nil for anything else.
    public static let summarizer: EventSummarizer = { envelope in
        guard let torn = envelope.event as? FileSinkTornLine else { return nil }
        return LogRecord(
            level: .warning,
            message: "\(torn.sink): torn last line of \(torn.path) (\(torn.byteCount) bytes) moved to \(torn.movedTo); \(torn.keptBytes) bytes kept",
            fields: [.init("sink", torn.sink), .init("path", torn.path), .init("moved_to", torn.movedTo),
                     .init("bytes", "\(torn.byteCount)"), .init("kept", "\(torn.keptBytes)")])
    }
}
