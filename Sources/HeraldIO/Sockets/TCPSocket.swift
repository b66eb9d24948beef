import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket: the one POSIX socket layer under the HTTP server, the HTTP client and the NATS
/// client. A connected socket from ``connect(host:port:before:wake:stop:)`` is non-blocking and
/// close-on-exec, with Nagle off; sends never raise `SIGPIPE`. Every call retries what a signal
/// interrupted.
///
/// A value wrapping the descriptor: copies share it, and exactly one owner calls ``close()``.
public struct TCPSocket: ByteStream, Sendable, Hashable {
    /// The socket's descriptor.
    public let descriptor: Int32

    /// Wraps a descriptor the caller opened (or was given).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    // MARK: Reading and writing

    /// `send` without `SIGPIPE`: ``IOResult/bytes(_:)``, ``IOResult/wantWrite`` when a
    /// non-blocking socket's buffer is full, ``IOResult/failed(_:)`` with the `errno` (`EPIPE`,
    /// `ECONNRESET` when the peer is gone).
    public func send(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard bytes.count > 0 else { return .bytes(0) }
        while true {
            let count = Platform.send(descriptor, bytes.baseAddress, bytes.count, Platform.noSignal)
            if count >= 0 { return .bytes(count) }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wantWrite : .failed(SystemError(errno: code))
        }
    }

    /// The `recv(2)` call: an injection point for tests.
    public typealias ReceiveCall = (Int32, UnsafeMutableRawPointer?, Int) -> Int

    /// `recv`: ``IOResult/bytes(_:)``, ``IOResult/closed`` at the end of the stream,
    /// ``IOResult/wantRead`` when a non-blocking socket has nothing yet, or the failure.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, call: ReceiveCall? = nil) -> IOResult {
        while true {
            let count = call.map { $0(descriptor, buffer.baseAddress, buffer.count) } ?? recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wantRead : .failed(SystemError(errno: code))
        }
    }

    /// ``ByteStream`` reading: ``receive(into:call:)``.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult { receive(into: buffer) }

    /// ``ByteStream`` writing: ``send(_:)``.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) -> IOResult { send(bytes) }

    /// Reads what is available (up to 64 KiB) from a blocking socket; nil at the end of the
    /// stream or on an error.
    public func receiveChunk(call: ReceiveCall? = nil) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let result = chunk.withUnsafeMutableBytes { receive(into: $0, call: call) }
        guard case .bytes(let count) = result else { return nil }
        chunk.removeSubrange(count...)
        return chunk
    }

    /// Writes all of `bytes` to a blocking socket; false when the peer went away.
    @discardableResult
    public func sendAll<Bytes: ContiguousBytes>(_ bytes: Bytes) -> Bool {
        bytes.withUnsafeBytes { sendAll($0) }
    }

    private func sendAll(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            guard case .bytes(let count) = send(UnsafeRawBufferPointer(rebasing: buffer[offset...])), count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// Ends the sending direction (the peer reads the end of the stream).
    public func shutdownWriting() { _ = shutdown(descriptor, Platform.shutWrite) }

    /// Ends both directions (a thread blocked on the socket wakes up), keeping the descriptor.
    public func shutdownBoth() { _ = shutdown(descriptor, Platform.shutBoth) }

    /// ``ByteStream`` close: closes the descriptor.
    public mutating func close() { Platform.close(descriptor) }

    /// Closes `descriptor`.
    public static func close(_ descriptor: Int32) { Platform.close(descriptor) }
}
