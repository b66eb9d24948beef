import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Speaks systemd's notify protocol (sd_notify(3)) without a library: one datagram per message
/// to the `AF_UNIX` socket named by `NOTIFY_SOCKET` (a path, or an abstract name written with a
/// leading `@`).
///
/// Sending never blocks (`MSG_DONTWAIT`): a message the socket cannot take now is dropped and
/// ``send(_:)`` says so. Made from the environment; nil when `NOTIFY_SOCKET` is not set, so a
/// daemon not run by systemd sends nothing.
public struct SystemdNotifier: Sendable {
    /// The socket's address as given (`/run/systemd/notify`, `@herald-test`).
    public let socket: String
    /// Half of `WATCHDOG_USEC` when the watchdog is on for this process (`WATCHDOG_PID` unset or
    /// ours): how often `WATCHDOG=1` is due.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`; nil without
    /// a usable `NOTIFY_SOCKET`.
    public init?(environment: [String: String], processID: Int32 = getpid()) {
        guard let socket = environment["NOTIFY_SOCKET"], socket.hasPrefix("/") || socket.hasPrefix("@"), socket.utf8.count < 108 else {
            return nil
        }
        self.socket = socket
        var interval: Duration?
        if let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 {
            let forUs = environment["WATCHDOG_PID"].map { Int32($0) == processID } ?? true
            if forUs { interval = .microseconds(Int64(clamping: usec / 2)) }
        }
        self.watchdogInterval = interval
    }

    /// Sends `message` (`READY=1`, `STATUS=…`, several lines for several assignments).
    ///
    /// - Returns: whether the datagram was sent.
    @discardableResult
    public func send(_ message: String) -> Bool {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socket.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in name.enumerated() where index < bytes.count { bytes[index] = byte }
        }
        // An abstract name is exactly its bytes; a path ends with its NUL.
        let length = socklen_t(pathOffset + name.count + (abstract ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
            }
        }
        return sent == bytes.count
    }

    /// `CLOCK_MONOTONIC` in microseconds, as `MONOTONIC_USEC=` wants it.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// `RELOADING=1` with `MONOTONIC_USEC`, as `Type=notify-reload` requires and `notify` accepts.
    public func reloading() {
        send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }
}
