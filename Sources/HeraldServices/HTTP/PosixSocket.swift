import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX calls ``SocketExchange`` makes, in one place for the differences between Glibc
/// and Darwin. Every descriptor is non-blocking and close-on-exec (a child process must not
/// inherit a connection); sends never raise `SIGPIPE`.
enum PosixSocket {
    /// One resolved address.
    struct Address {
        var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    enum ConnectStart {
        case connected
        case inProgress
        case failed(Int32)
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0
    #endif

    /// `strerror` with the symbolic number, e.g. `Connection refused (errno 111)`.
    static func describe(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    /// Resolves `host` (a name or a literal) to stream addresses, in the resolver's order.
    /// Blocks while the resolver works, so it is only called on an exchange's own thread.
    /// - Throws: `.transport` naming the host when it does not resolve.
    static func resolve(host: String, port: Int) throws(ServiceError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? describe(errno) : String(cString: gai_strerror(status))
            throw .transport("cannot resolve the host \(host): \(reason)")
        }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = min(Int(current.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: socketAddress, count: length))
                }
                addresses.append(Address(family: current.pointee.ai_family, storage: storage, length: socklen_t(length)))
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .transport("the host \(host) has no address") }
        return addresses
    }

    /// A non-blocking, close-on-exec TCP socket with Nagle off (a request is written whole).
    static func open(family: Int32) throws(ServiceError) -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(family, streamType | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        #else
        let descriptor = socket(family, streamType, 0)
        #endif
        guard descriptor >= 0 else { throw .transport("cannot open a socket: \(describe(errno))") }
        #if canImport(Darwin)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return descriptor
    }

    /// Starts connecting; a non-blocking socket usually answers `.inProgress`.
    static func startConnect(_ descriptor: Int32, _ address: Address) -> ConnectStart {
        var storage = address.storage
        while true {
            let status = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { posixConnect(descriptor, $0, address.length) }
            }
            if status == 0 { return .connected }
            let code = errno
            if code == EINTR { continue }
            return code == EINPROGRESS ? .inProgress : .failed(code)
        }
    }

    /// The outcome of a connect that was in progress: 0, or the `errno` it failed with.
    static func pendingError(_ descriptor: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    /// `send` without `SIGPIPE`; -1 with `errno` set on failure.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        posixSend(descriptor, bytes, count, noSignal)
    }

    /// `recv`; 0 at the end of the stream, -1 with `errno` set on failure.
    static func receive(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer, _ count: Int) -> Int {
        recv(descriptor, bytes, count, 0)
    }

    /// Opens a non-blocking, close-on-exec pipe into `ends` (read end first).
    static func makeWakePipe(_ ends: inout [Int32]) -> Bool {
        // Not pipe2: Glibc's module does not export it. A child spawned between pipe and
        // fcntl inherits two idle descriptors, nothing worse.
        guard pipe(&ends) == 0 else { return false }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        return true
    }

    static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}

#if canImport(Glibc)
private func posixConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    Glibc.connect(descriptor, address, length)
}
private func posixSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    Glibc.send(descriptor, bytes, count, flags)
}
#else
private func posixConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    Darwin.connect(descriptor, address, length)
}
private func posixSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    Darwin.send(descriptor, bytes, count, flags)
}
#endif
