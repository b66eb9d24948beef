import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX calls of the connection's I/O thread. Sockets are non-blocking and close-on-exec;
/// sends never raise `SIGPIPE`. Every call here may block only in `poll`, and only the
/// connection's own thread makes them.
enum NATSSocket {
    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif

    /// `strerror` and the number, e.g. `Connection refused (errno 111)`.
    static func reason(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }

    /// Connects to `server` before `deadline`, trying each address the resolver gives; gives up
    /// when `stop` says so after a wake-up.
    /// - Throws: a reason naming the server.
    static func connect(to server: NATSServerAddress, before deadline: ContinuousClock.Instant, wake: Int32,
                        stop: () -> Bool) throws(NATSError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(server.host, String(server.port), &hints, &list)
        guard status == 0, let first = list else {
            throw .connectionFailed("\(server): the host does not resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            let descriptor = openSocket(family: current.pointee.ai_family)
            guard descriptor >= 0 else { failure = reason(errno); continue }
            var result = systemConnect(descriptor, address, current.pointee.ai_addrlen)
            var code = result == 0 ? 0 : errno
            if result != 0, code == EINPROGRESS {
                let ready = waitUntil(descriptor, events: Int16(POLLOUT), wake: wake, deadline: deadline, stop: stop)
                if ready {
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    result = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
                    if result != 0 { code = errno }
                } else {
                    code = ETIMEDOUT
                }
            }
            if code == 0 { return descriptor }
            failure = reason(code)
            close(descriptor)
        }
        throw .connectionFailed("\(server): \(failure)")
    }

    private static func openSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(family, streamType | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        #else
        let descriptor = socket(family, streamType, 0)
        if descriptor >= 0 {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        #endif
        if descriptor >= 0 {
            // Small frames (a request, an ack) must not wait for Nagle; the write buffer already
            // coalesces publishes into large writes.
            var on: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        return descriptor
    }

    /// Polls `descriptor` for `events` until it is ready (true) or the deadline passes (false);
    /// bytes on the wake pipe are drained and the wait goes on, unless `stop` then says to give
    /// up (false).
    static func waitUntil(_ descriptor: Int32, events: Int16, wake: Int32, deadline: ContinuousClock.Instant,
                          stop: () -> Bool = { false }) -> Bool {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            var descriptors = [pollfd(fd: descriptor, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let count = poll(&descriptors, 2, milliseconds(remaining))
            if count < 0, errno != EINTR { return false }
            if descriptors[1].revents != 0 {
                drain(wake)
                if stop() { return false }
            }
            if descriptors[0].revents != 0 { return true }
        }
    }

    /// Whole milliseconds, rounded up so a wait never ends just before its deadline.
    static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: duration.millisecondsRoundedUp)
    }

    /// `send` without `SIGPIPE`: the count written, or -1 with `errno`.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        #if canImport(Glibc)
        return Glibc.send(descriptor, base, bytes.count, sendFlags)
        #else
        return Darwin.send(descriptor, base, bytes.count, sendFlags)
        #endif
    }

    /// `recv`: the count read, 0 at the end of the stream, -1 with `errno`.
    static func receive(_ descriptor: Int32, _ bytes: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return recv(descriptor, base, bytes.count, 0)
    }

    /// A non-blocking, close-on-exec pipe: (read end, write end).
    static func makePipe() -> (Int32, Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }

    /// Reads everything waiting on the wake pipe.
    static func drain(_ descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) > 0 {}
    }

    /// Writes one byte to the wake pipe (a full pipe already wakes the thread).
    static func poke(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    private static func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        while true {
            #if canImport(Glibc)
            let result = Glibc.connect(descriptor, address, length)
            #else
            let result = Darwin.connect(descriptor, address, length)
            #endif
            if result != 0, errno == EINTR { continue }
            return result
        }
    }
}
