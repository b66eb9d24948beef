import Foundation
import HeraldSync

/// A wall clock (`Date`) that moves only when a test says so: for the sandbox's time, envelope
/// timestamps and retention. (Code that sleeps takes a `Clock`: HeraldTesting's `ManualClock`.)
public final class ManualDate: Sendable {
    private let date: SyncLock<Date>

    /// A clock at `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        date = SyncLock(start)
    }

    /// The date now.
    public var now: Date { date.withLock { $0 } }

    /// Moves the date `seconds` forward.
    public func advance(by seconds: TimeInterval) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
