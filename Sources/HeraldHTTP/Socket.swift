import Foundation
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the server needs, one place for the platform
/// differences between Glibc and Darwin.
enum Socket {
    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0
    #endif

    /// Opens a listening TCP socket on `host` (an IPv4 address, 127.0.0.1 by default) and `port`
    /// (0 = ephemeral); returns it and the port.
    static func listen(host: String = "127.0.0.1", port: Int) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        var hostAddress = in_addr()
        guard inet_pton(AF_INET, host, &hostAddress) == 1 else {
            throw HTTPServerError(operation: "\(host) is not an IPv4 address", code: 0)
        }
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw HTTPServerError.socket("socket", errno) }
        // Non-blocking, so an accept(2) after a peer gave up between poll(2) and accept(2)
        // returns EAGAIN instead of blocking the accepting thread.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        address.sin_addr = hostAddress
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError.socket("bind to \(host):\(port)", code)
        }
        guard posixListen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError.socket("listen", code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    /// What a wait for a socket ended with.
    enum Readiness: Equatable {
        /// The socket has bytes (or its end of stream, or an error) to read.
        case readable
        /// The wake descriptor fired: the server is stopping.
        case woken
        /// The time ran out (or a signal interrupted the wait: the caller checks its clock).
        case timedOut
    }

    /// Waits up to `milliseconds` (-1: no limit) for `fd` to become readable or `wake` (the
    /// read end of the server's stop pipe, -1 for none) to fire.
    static func wait(_ fd: Int32, wake: Int32, milliseconds: Int32) -> Readiness {
        var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        let count = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard count > 0 else { return .timedOut }
        if descriptors[0].revents != 0 { return .woken }
        return descriptors[1].revents != 0 ? .readable : .timedOut
    }

    /// What a stream's wait ended with.
    enum StreamReadiness: Equatable {
        case readable
        case woken
        case notified
        case timedOut
    }

    /// ``wait(_:wake:milliseconds:)`` that also watches `notifier`, a stream's wake-up pipe.
    static func wait(_ fd: Int32, wake: Int32, notifier: Int32, milliseconds: Int32) -> StreamReadiness {
        var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: notifier, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        let count = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard count > 0 else { return .timedOut }
        if descriptors[0].revents != 0 { return .woken }
        if descriptors[1].revents != 0 { return .notified }
        return descriptors[2].revents != 0 ? .readable : .timedOut
    }

    /// Milliseconds for poll(2) from a duration: rounded up, so a wait never ends before its
    /// time, and clamped to what poll takes.
    static func pollMilliseconds(_ duration: Duration) -> Int32 {
        Int32(min(duration.millisecondsRoundedUp, 86_400_000))
    }

    /// A pipe whose write end, written once, wakes every ``wait(_:wake:milliseconds:)`` on its
    /// read end for good (it is never drained).
    static func makeWakePipe() throws(HTTPServerError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw HTTPServerError.socket("pipe", errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Fires a pipe made by ``makeWakePipe()``.
    static func signalWake(_ writeEnd: Int32) {
        var byte: UInt8 = 1
        #if canImport(Glibc)
        _ = Glibc.write(writeEnd, &byte, 1)
        #else
        _ = Darwin.write(writeEnd, &byte, 1)
        #endif
    }

    /// What accept(2) gave.
    enum AcceptResult: Equatable {
        case connection(Int32)
        /// Nothing to take after all (the peer gave up first, or a transient error): try again.
        case retry
        /// The process or the system has no descriptor (or buffer) left: waiting is the only
        /// cure, retrying at once spins.
        case outOfResources(errno: Int32)
        /// Any other failure.
        case failed(errno: Int32)
    }

    /// The accept(2) call itself: an injection point for tests.
    typealias AcceptCall = @Sendable (Int32) -> Int32

    static let systemAccept: AcceptCall = { posixAccept($0, nil, nil) }

    /// Accepts one connection, retrying a call a signal interrupted.
    static func accept(_ fd: Int32, call: AcceptCall = systemAccept) -> AcceptResult {
        var client: Int32
        repeat { client = call(fd) } while client < 0 && errno == EINTR
        guard client >= 0 else {
            let code = errno
            switch code {
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfResources(errno: code)
            case EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO, EPERM: return .retry
            default: return .failed(errno: code)
            }
        }
        // Not inherited by child processes (tests run curl), and blocking whatever the
        // listening socket is (Darwin's accept copies O_NONBLOCK).
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
        var yes: Int32 = 1
        _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return .connection(client)
    }

    /// The recv(2) call itself: an injection point for tests.
    typealias ReceiveCall = (Int32, UnsafeMutableRawPointer?, Int) -> Int

    static func systemReceive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        recv(fd, buffer, count, 0)
    }

    /// Reads what is available (up to 64 KiB), retrying a call a signal interrupted; nil on
    /// end of stream or error.
    static func read(_ fd: Int32, call: ReceiveCall = systemReceive) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { call(fd, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count > 0 else { return nil }
        return Array(chunk[0..<count])
    }

    /// Writes all of `bytes`, retrying calls a signal interrupted; false when the peer went away.
    static func write<Bytes: ContiguousBytes>(_ fd: Int32, _ bytes: Bytes) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = send(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset, noSignal)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Answers a connection the server will not serve and closes it, never blocking: `bytes`
    /// go out only if the send buffer takes them at once (a fresh socket's always does). What
    /// the client already sent is read first, so the close sends FIN rather than a reset that
    /// could discard the answer.
    static func refuse(_ fd: Int32, with bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal | Int32(MSG_DONTWAIT)) }
        shutdownWriting(fd)
        var sink = [UInt8](repeating: 0, count: 4096)
        var reads = 0
        while reads < 16, sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {
            reads += 1
        }
        close(fd)
    }

    static func shutdownWriting(_ fd: Int32) {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_WR))
        #else
        _ = shutdown(fd, SHUT_WR)
        #endif
    }

    static func shutdownBoth(_ fd: Int32) {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_RDWR))
        #else
        _ = shutdown(fd, SHUT_RDWR)
        #endif
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }
}

#if canImport(Glibc)
private func posixListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
private func posixAccept(_ fd: Int32, _ a: UnsafeMutablePointer<sockaddr>?, _ l: UnsafeMutablePointer<socklen_t>?) -> Int32 { Glibc.accept(fd, a, l) }
#else
private func posixListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Darwin.listen(fd, backlog) }
private func posixAccept(_ fd: Int32, _ a: UnsafeMutablePointer<sockaddr>?, _ l: UnsafeMutablePointer<socklen_t>?) -> Int32 { Darwin.accept(fd, a, l) }
#endif
