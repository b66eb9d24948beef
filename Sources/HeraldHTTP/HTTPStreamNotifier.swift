#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes a stream's ``HTTPStreamConnection/wait(for:timeout:)`` from any thread, without ever
/// blocking the caller: a non-blocking pipe whose write end takes one byte per wake-up (a full
/// pipe already means "wake up").
///
/// `Sendable`: its two descriptors are fixed at creation and closed only in `deinit`.
public final class HTTPStreamNotifier: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    /// A notifier.
    ///
    /// - Throws: ``HTTPServerError`` when the process has no descriptor left for its pipe.
    public init() throws(HTTPServerError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw HTTPServerError.socket("pipe", errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        Socket.close(readEnd)
        Socket.close(writeEnd)
    }

    /// Wakes the waiting stream (now, or at its next wait). Never blocks.
    public func notify() {
        Socket.signalWake(writeEnd)
    }

    /// Empties the pipe, so the next wait sleeps until the next ``notify()``.
    func consume() {
        var sink = [UInt8](repeating: 0, count: 256)
        while sink.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
