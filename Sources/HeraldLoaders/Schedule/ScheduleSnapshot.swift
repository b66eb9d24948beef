import Foundation

/// What one loader's schedule has done and will do next, as a ``ScheduleMonitor`` saw it.
public struct ScheduleSnapshot: Sendable, Hashable {
    /// What the schedule is doing.
    public enum State: String, Sendable, Hashable, Codable {
        /// Not started, or waiting for the rest of the program to start.
        case starting
        /// A load is in flight.
        case loading
        /// Waiting for its next run.
        case waiting
        /// Stopped.
        case stopped
    }

    /// What the schedule is doing now.
    public var state: State = .starting
    /// Loads finished, successful or not.
    public var pulls = 0
    /// Failed loads by ``LoadError/kind`` (`transport`, `httpStatus`, `rateLimited`, …).
    public var failures: [String: Int] = [:]
    /// Items announced as new, over every load.
    public var newItems = 0
    /// When the last load began (wall clock).
    public var lastRun: Date?
    /// How the last load ended.
    public var lastOutcome: LoadOutcome?
    /// When the last successful load ended.
    public var lastSuccess: Date?
    /// When the next load is due (wall clock); nil while loading or stopped.
    public var nextRun: Date?
    /// Failures in a row (rate limits excluded).
    public var consecutiveFailures = 0

    /// Nothing done yet.
    public init() {}
}
