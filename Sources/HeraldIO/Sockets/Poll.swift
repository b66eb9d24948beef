import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sleeping in `poll(2)` on a socket and a wake pipe: the only way Herald's I/O threads wait,
/// so a wait costs no CPU however long it is.
public enum Poll {
    /// `POLLIN`: wait until the descriptor is readable (or closed, or failed).
    public static let input = Int16(POLLIN)
    /// `POLLOUT`: wait until the descriptor is writable.
    public static let output = Int16(POLLOUT)

    /// What ``wait(_:for:wake:deadline:stop:)`` ended with.
    public enum Outcome: Sendable, Hashable {
        /// The descriptor reported these events (or an error or hang-up, which the next call on
        /// it reports).
        case ready(Int16)
        /// The deadline passed.
        case timedOut
        /// The wake pipe fired and `stop` said to give up.
        case stopped
        /// `poll` itself failed.
        case failed(SystemError)
    }

    /// Sleeps until `descriptor` reports one of `events`, `deadline` passes, or the wake pipe
    /// (read end `wake`) fires and `stop` then answers true. Bytes on the wake pipe are drained
    /// before `stop` is asked, so a wake-up meant for something else does not end the wait.
    public static func wait(_ descriptor: Int32, for events: Int16, wake: Int32, deadline: ContinuousClock.Instant,
                            stop: () -> Bool = { false }) -> Outcome {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return .timedOut }
            var descriptors = [pollfd(fd: descriptor, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let count = poll(&descriptors, 2, milliseconds(remaining))
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                return .failed(SystemError(operation: "poll", errno: code))
            }
            if descriptors[1].revents != 0 {
                WakePipe.drain(wake)
                if stop() { return .stopped }
            }
            if descriptors[0].revents != 0 { return .ready(descriptors[0].revents) }
        }
    }

    /// What ``wait(readable:wakers:milliseconds:)`` ended with.
    public enum Readiness: Sendable, Hashable {
        /// The descriptor has bytes (or its end of stream, or an error) to read.
        case readable
        /// The waker at this index in the list fired (it is not drained).
        case woken(Int)
        /// The time ran out (or a signal interrupted the wait: the caller checks its clock).
        case timedOut
    }

    /// Sleeps up to `milliseconds` (-1: no limit) until `descriptor` is readable or one of
    /// `wakers` (read ends of pipes) is; the first waker that fired wins over the descriptor.
    /// A `descriptor` of -1 waits on the wakers alone.
    public static func wait(readable descriptor: Int32, wakers: [Int32], milliseconds: Int32) -> Readiness {
        var descriptors = wakers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        let count = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard count > 0 else { return .timedOut }
        if let index = descriptors.dropLast().firstIndex(where: { $0.revents != 0 }) { return .woken(index) }
        return descriptors[descriptors.count - 1].revents != 0 ? .readable : .timedOut
    }

    /// Sleeps up to `milliseconds` on `descriptors` (each with its events); answers the events
    /// each reported, all 0 after a timeout or an interrupting signal.
    public static func wait(_ descriptors: [(descriptor: Int32, events: Int16)], milliseconds: Int32) -> Result<[Int16], SystemError> {
        var entries = descriptors.map { pollfd(fd: $0.descriptor, events: $0.events, revents: 0) }
        let count = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        if count < 0 {
            let code = errno
            return code == EINTR ? .success(entries.map { _ in 0 }) : .failure(SystemError(operation: "poll", errno: code))
        }
        return .success(entries.map(\.revents))
    }

    /// Milliseconds for `poll` from a duration: rounded up, so a wait never ends before its
    /// time and goes round again, and clamped to a day (what every caller re-checks by).
    public static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(min(duration.millisecondsRoundedUp, 86_400_000))
    }
}
