#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPSocket {
    /// Opens a listening socket on `host` (an IPv4 address) and `port` (0: one the kernel picks)
    /// and returns it with its port. It is non-blocking, so an `accept` after a peer gave up
    /// between `poll` and `accept` returns at once instead of blocking the accepting thread.
    /// - Throws: ``SystemError`` naming the call (`bind to 127.0.0.1:8420`), or the address.
    public static func listen(host: String = "127.0.0.1", port: Int, backlog: Int32 = 128) throws(SystemError) -> (socket: TCPSocket, port: Int) {
        var hostAddress = in_addr()
        guard inet_pton(AF_INET, host, &hostAddress) == 1 else { throw SystemError("\(host) is not an IPv4 address") }
        let fd = socket(AF_INET, Platform.streamType, 0)
        guard fd >= 0 else { throw SystemError(operation: "socket", errno: errno) }
        Platform.configure(fd, nonBlocking: true)
        Platform.setOption(fd, SOL_SOCKET, SO_REUSEADDR)
        #if canImport(Darwin)
        Platform.setOption(fd, SOL_SOCKET, SO_NOSIGPIPE)
        #endif
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        address.sin_addr = hostAddress
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            Platform.close(fd)
            throw SystemError(operation: "bind to \(host):\(port)", errno: code)
        }
        guard Platform.listen(fd, backlog) == 0 else {
            let code = errno
            Platform.close(fd)
            throw SystemError(operation: "listen", errno: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (TCPSocket(descriptor: fd), Int(UInt16(bigEndian: actual.sin_port)))
    }

    /// What ``accept(call:)`` gave.
    public enum AcceptResult: Sendable, Hashable {
        /// A connection: a blocking, close-on-exec socket with Nagle off.
        case connection(Int32)
        /// Nothing to take after all (the peer gave up first, or a transient error): try again.
        case retry
        /// The process or the system has no descriptor (or buffer) left: waiting is the only
        /// cure, retrying at once spins.
        case outOfResources(errno: Int32)
        /// Any other failure.
        case failed(errno: Int32)
    }

    /// The `accept(2)` call itself: an injection point for tests.
    public typealias AcceptCall = @Sendable (Int32) -> Int32

    /// The system's `accept(2)`.
    public static let systemAccept: AcceptCall = { Platform.accept($0) }

    /// Accepts one connection on a listening socket. The connection is blocking whatever the
    /// listening socket is (Darwin's accept copies `O_NONBLOCK`): its thread of its own waits in
    /// `poll` and then reads or writes.
    public func accept(call: AcceptCall = systemAccept) -> AcceptResult {
        var client: Int32
        repeat { client = call(descriptor) } while client < 0 && errno == EINTR
        guard client >= 0 else {
            let code = errno
            switch code {
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfResources(errno: code)
            case EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO, EPERM: return .retry
            default: return .failed(errno: code)
            }
        }
        Platform.configure(client, nonBlocking: false)
        Platform.tune(client)
        return .connection(client)
    }

    /// Answers a connection that will not be served and closes it, never blocking: `bytes` go
    /// out only if the send buffer takes them at once (a fresh socket's always does). What the
    /// client already sent is read first, so the close sends FIN rather than a reset that could
    /// discard the answer.
    public func refuse(with bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Platform.send(descriptor, $0.baseAddress, $0.count, Platform.noSignal | Int32(MSG_DONTWAIT)) }
        shutdownWriting()
        var sink = [UInt8](repeating: 0, count: 4096)
        var reads = 0
        while reads < 16, sink.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {
            reads += 1
        }
        Platform.close(descriptor)
    }
}
