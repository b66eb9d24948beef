import HeraldIO
import HeraldSync

/// The connection a ``HTTPResponseStream`` writes to, from the connection's own thread.
///
/// `Sendable`: the descriptor is only shut down (never closed) from other threads, and only
/// while the server has not yet closed it (``close()`` checks under a lock that the server
/// clears first), so a number the kernel has reused for another socket is never touched.
public final class HTTPStreamConnection: Sendable {
    /// What ``wait(for:timeout:)`` ended with.
    public enum Wait: Sendable, Hashable {
        /// The notifier fired: there is something to write.
        case notified
        /// The client closed the connection, it failed or was closed, or the server is stopping.
        case closed
        /// The timeout passed.
        case timedOut
    }

    private let fd: Int32
    private let wake: Int32
    private let open = SyncLock(true)

    init(fd: Int32, wake: Int32) {
        self.fd = fd
        self.wake = wake
    }

    /// Writes all of `bytes`, blocking the calling (connection) thread while the client's
    /// socket buffer is full; false when the client went away or the connection was closed.
    public func write(_ bytes: [UInt8]) -> Bool {
        TCPSocket(descriptor: fd).sendAll(bytes)
    }

    /// Waits until `notifier` fires, the client goes away (whatever it sends is read and
    /// dropped), the server stops, or `timeout` passes (nil: no limit). Blocks the calling thread:
    /// call it from the stream's body only.
    public func wait(for notifier: HTTPStreamNotifier, timeout: Duration? = nil) -> Wait {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return .timedOut }
                milliseconds = Poll.milliseconds(left)
            }
            switch Poll.wait(readable: fd, wakers: [wake, notifier.readEnd], milliseconds: milliseconds) {
            case .woken(0):
                return .closed
            case .woken:
                notifier.consume()
                return .notified
            case .readable:
                guard TCPSocket(descriptor: fd).receiveChunk() != nil else { return .closed }
            case .timedOut:
                continue
            }
        }
    }

    /// Shuts the connection down from any thread (a client that does not keep up, say): a
    /// blocked ``write(_:)`` and ``wait(for:timeout:)`` return at once. Does nothing once the
    /// stream has ended.
    public func close() {
        open.withLock { isOpen in
            if isOpen { TCPSocket(descriptor: fd).shutdownBoth() }
        }
    }

    /// Called by the server before it closes the descriptor.
    func end() {
        open.withLock { $0 = false }
    }
}
