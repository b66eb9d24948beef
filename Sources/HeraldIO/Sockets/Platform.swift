#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place for the differences between Glibc and Darwin in the socket calls: names the
/// Swift overlays spell differently, and the flags one platform has and the other lacks.
enum Platform {
    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    /// `send` flags that keep a write to a closed peer from raising `SIGPIPE`.
    static let noSignal = Int32(MSG_NOSIGNAL)
    static let shutWrite = Int32(SHUT_WR)
    static let shutBoth = Int32(SHUT_RDWR)
    #else
    static let streamType = SOCK_STREAM
    static let noSignal: Int32 = 0
    static let shutWrite = SHUT_WR
    static let shutBoth = SHUT_RDWR
    #endif

    static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    static func send(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
        #if canImport(Glibc)
        Glibc.send(descriptor, bytes, count, flags)
        #else
        Darwin.send(descriptor, bytes, count, flags)
        #endif
    }

    static func connect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(descriptor, address, length)
        #else
        Darwin.connect(descriptor, address, length)
        #endif
    }

    static func listen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(descriptor, backlog)
        #else
        Darwin.listen(descriptor, backlog)
        #endif
    }

    static func accept(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.accept(descriptor, nil, nil)
        #else
        Darwin.accept(descriptor, nil, nil)
        #endif
    }

    static func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }

    static func read(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, bytes, count)
        #else
        Darwin.read(descriptor, bytes, count)
        #endif
    }

    /// Sets `FD_CLOEXEC` and, if asked, `O_NONBLOCK` (or clears it).
    static func configure(_ descriptor: Int32, nonBlocking: Bool) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    static func setOption(_ descriptor: Int32, _ level: Int32, _ name: Int32) {
        var yes: Int32 = 1
        _ = setsockopt(descriptor, level, name, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Turns off Nagle (a request or a frame is written whole) and, on Darwin, `SIGPIPE`.
    static func tune(_ descriptor: Int32) {
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY)
        #if canImport(Darwin)
        setOption(descriptor, SOL_SOCKET, SO_NOSIGPIPE)
        #endif
    }
}
