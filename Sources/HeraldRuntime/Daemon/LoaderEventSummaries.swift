import Foundation
import Herald
import HeraldLoaders
import HeraldSubscribers

/// One-line summaries of loader events for the log subscriber: `home: 20 statuses, 3 new`.
public enum LoaderEventSummaries {
    /// Summarises ``TimelineLoaded``, ``MastodonStatusesLoaded``, ``FeedItemsLoaded``, ``TiqavLoaded``, ``TodosLoaded``, ``LoadFailed``,
    /// ``LoaderStateSetAside``, ``LoaderStateUnwritable`` and the post scheduler's ``PostSent``,
    /// ``PostFailed``, ``PostHeld``, ``PostRecorded`` and ``PostUploadProgress``; nil for
    /// anything else.
    public static let summarizer: EventSummarizer = { envelope in
        switch envelope.event {
        case let loaded as TimelineLoaded:
            var fields: [LogRecord.Field] = [.init("loader", loaded.loader), .init("statuses", "\(loaded.statuses.count)"),
                                             .init("new", "\(loaded.newStatuses.count)")]
            if let remaining = loaded.rateLimitRemaining { fields.append(.init("rate_remaining", "\(remaining)")) }
            return LogRecord(level: .info, message: "\(loaded.loader): \(count(loaded.statuses.count, "status", "statuses")), \(loaded.newStatuses.count) new",
                             fields: fields)
        case let loaded as MastodonStatusesLoaded:
            var fields: [LogRecord.Field] = [.init("loader", loaded.loader), .init("timeline", loaded.timeline),
                                             .init("statuses", "\(loaded.statuses.count)"), .init("new", "\(loaded.newStatuses.count)")]
            if let remaining = loaded.rateLimitRemaining { fields.append(.init("rate_remaining", "\(remaining)")) }
            return LogRecord(level: .info, message: "\(loaded.loader): \(count(loaded.statuses.count, "status", "statuses")), \(loaded.newStatuses.count) new",
                             fields: fields)
        case let loaded as TiqavLoaded:
            return LogRecord(level: .info, message: "\(loaded.loader): \(count(loaded.images.count, "image", "images")), \(loaded.newImages.count) new",
                             fields: [.init("loader", loaded.loader), .init("images", "\(loaded.images.count)"),
                                      .init("new", "\(loaded.newImages.count)")])
        case let loaded as TodosLoaded:
            var message = "\(loaded.loader): \(count(loaded.todos.count, "todo", "todos")), \(loaded.newTodos.count) new"
            if !loaded.removedIDs.isEmpty { message += ", \(loaded.removedIDs.count) removed" }
            return LogRecord(level: .info, message: message,
                             fields: [.init("loader", loaded.loader), .init("todos", "\(loaded.todos.count)"),
                                      .init("new", "\(loaded.newTodos.count)"), .init("removed", "\(loaded.removedIDs.count)")])
        case let loaded as FeedItemsLoaded:
            var fields: [LogRecord.Field] = [.init("loader", loaded.loader), .init("items", "\(loaded.itemCount)"),
                                             .init("new", "\(loaded.newItems.count)")]
            var message = loaded.notModified ? "\(loaded.loader): feed not modified"
                : "\(loaded.loader): \(count(loaded.itemCount, "item", "items")), \(loaded.newItems.count) new"
            if loaded.duplicateItems > 0 { message += ", \(loaded.duplicateItems) repeated ids left out" }
            if loaded.itemsWithoutID > 0 { message += ", \(loaded.itemsWithoutID) without any id left out" }
            if let moved = loaded.movedTo {
                message += "; the feed moved permanently to \(moved): update its url"
                fields.append(.init("moved_to", moved))
            }
            return LogRecord(level: loaded.movedTo == nil ? .info : .warning, message: message, fields: fields)
        case let failed as LoadFailed:
            var message = "\(failed.loader): load failed: \(failed.error)"
            var fields: [LogRecord.Field] = [.init("loader", failed.loader), .init("error", failed.error.kind)]
            if let status = failed.error.status { fields.append(.init("status", "\(status)")) }
            if let retryAt = failed.error.retryAt {
                let stamp = retryAt.formatted(.iso8601)
                message += " (resets \(stamp))"
                fields.append(.init("retry_at", stamp))
            }
            let level: LogLevel = failed.error.kind == "cancelled" ? .debug : failed.error.stopsLoader ? .error : .warning
            return LogRecord(level: level, message: message, fields: fields)
        case let aside as LoaderStateSetAside:
            let moved = aside.movedTo.map { "moved to \($0)" } ?? "could not be moved"
            return LogRecord(level: .warning, message: "\(aside.loader): state file \(aside.path) is unreadable (\(aside.reason)); \(moved)",
                             fields: [.init("loader", aside.loader), .init("path", aside.path)])
        case let unwritable as LoaderStateUnwritable:
            return LogRecord(level: .warning, message: "\(unwritable.loader): cannot save state in \(unwritable.directory) (\(unwritable.reason)); keeping it in memory",
                             fields: [.init("loader", unwritable.loader), .init("directory", unwritable.directory)])
        case let sent as PostSent:
            let what = sent.duplicate ? "already posted (duplicate)" : "sent \(sent.id ?? "")"
            return LogRecord(level: .info, message: "\(sent.rule): \(what) via \(sent.service) (\(count(sent.attempts, "attempt", "attempts")), key \(sent.key))",
                             fields: [.init("rule", sent.rule), .init("key", sent.key), .init("id", sent.id ?? ""),
                                      .init("duplicate", "\(sent.duplicate)"), .init("attempts", "\(sent.attempts)")])
        case let failed as PostFailed:
            var fields: [LogRecord.Field] = [.init("rule", failed.rule), .init("key", failed.key ?? ""), .init("attempts", "\(failed.attempts)")]
            if let status = failed.status { fields.append(.init("status", "\(status)")) }
            return LogRecord(level: .error, message: "\(failed.rule): post failed via \(failed.service): \(failed.reason)", fields: fields)
        case let held as PostHeld:
            return LogRecord(level: .warning, message: "\(held.rule): post held, not sent: the outbox \(held.path) refused it (\(held.reason)); retrying",
                             fields: [.init("rule", held.rule), .init("key", held.key), .init("path", held.path)])
        case let recorded as PostRecorded:
            return LogRecord(level: .info, message: "\(recorded.rule): held post written to the outbox after \(count(recorded.refusals, "refusal", "refusals")); sending it",
                             fields: [.init("rule", recorded.rule), .init("key", recorded.key), .init("refusals", "\(recorded.refusals)")])
        case let progress as PostUploadProgress:
            let percent = progress.totalBytes > 0 ? progress.bytesSent * 100 / progress.totalBytes : 0
            return LogRecord(level: .debug, message: "\(progress.rule): upload \(progress.phase) \(progress.bytesSent)/\(progress.totalBytes) bytes (\(percent)%)",
                             fields: [.init("rule", progress.rule), .init("key", progress.key), .init("phase", progress.phase),
                                      .init("sent", "\(progress.bytesSent)"), .init("total", "\(progress.totalBytes)")])
        default:
            return nil
        }
    }

    private static func count(_ number: Int, _ one: String, _ many: String) -> String {
        "\(number) \(number == 1 ? one : many)"
    }
}
