import Foundation

/// A clock whose `sleep` returns at once, recording what was asked: upload polling runs on
/// virtual time.
final class TestClock: Clock, @unchecked Sendable {
    // @unchecked Sendable: `offset` and `sleeps` are only touched while holding `lock`.
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var offset = Duration.zero
    private var recorded: [Duration] = []

    var now: Instant { lock.withLock { Instant(offset: offset) } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Every sleep requested so far.
    var sleeps: [Duration] { lock.withLock { recorded } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        lock.withLock {
            recorded.append(deadline.offset - offset)
            if deadline.offset > offset { offset = deadline.offset }
        }
    }
}

/// A settable time source for the sandbox: the timeline grows and rate limits reset when a
/// test moves it, never by waiting.
final class ManualTime: @unchecked Sendable {
    // @unchecked Sendable: `current` is only touched while holding `lock`.
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = start
    }

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }
}
