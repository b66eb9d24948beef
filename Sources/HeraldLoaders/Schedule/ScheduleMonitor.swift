import Foundation
import HeraldSync

/// Records what a ``LoaderSchedule`` does, for a status page or metrics to read at any time.
///
/// The schedule reports each load's start and end and its next due time; ``snapshot`` copies
/// the record under a lock held only for that copy, so a reader on any thread never waits for a
/// load. `Sendable`.
public final class ScheduleMonitor: Sendable {
    private let record = SyncLock(ScheduleSnapshot())

    /// A monitor with nothing recorded.
    public init() {}

    /// The record so far.
    public var snapshot: ScheduleSnapshot { record.withLock { $0 } }

    func loadStarted(at date: Date) {
        record.withLock { record in
            record.state = .loading
            record.lastRun = date
            record.nextRun = nil
        }
    }

    func loadEnded(_ outcome: LoadOutcome, at date: Date, consecutiveFailures: Int) {
        record.withLock { record in
            record.pulls += 1
            record.lastOutcome = outcome
            record.consecutiveFailures = consecutiveFailures
            switch outcome {
            case .finished(_, let new):
                record.newItems += new
                record.lastSuccess = date
            case .failed(let error):
                record.failures[error.kind, default: 0] += 1
            }
        }
    }

    func waiting(until next: Date) {
        record.withLock { record in
            record.state = .waiting
            record.nextRun = next
        }
    }

    func stopped() {
        record.withLock { record in
            record.state = .stopped
            record.nextRun = nil
        }
    }
}
