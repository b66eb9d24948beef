import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP client for sending exactly the bytes a test wants (malformed or pipelined
/// requests that no HTTP library would write).
///
/// Reads block a thread of their own, never the cooperative pool; they have no deadline of
/// their own (a test's time limit bounds them) and end when the awaiting task is cancelled.
public final class RawClient: Sendable {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port`; nil when nothing listens.
    public init?(port: Int) {
        guard let fd = Self.connect(port: port) else { return nil }
        self.fd = fd
    }

    /// A TCP socket connected to 127.0.0.1:`port` (after `prepare` ran on it), or nil.
    public static func connect(port: Int, prepare: (Int32) -> Void = { _ in }) -> Int32? {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        prepare(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connectSocket(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    deinit { close(fd) }

    /// Sends all of `text`; false when the peer is gone.
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { sendBytes(fd, $0.baseAddress?.advanced(by: offset), $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Half-closes the connection: the server sees the end of the request stream.
    public func shutdownWriting() {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_WR))
        #else
        _ = shutdown(fd, SHUT_WR)
        #endif
    }

    /// What a read saw.
    public struct Received: Sendable {
        /// What arrived, as UTF-8.
        public var text: String
        /// Whether the peer closed the connection (end of stream or reset).
        public var closed: Bool
    }

    /// Reads until `predicate` holds for the text so far or the peer closes.
    public func read(until predicate: @escaping @Sendable (String) -> Bool) async -> String {
        await receive(until: predicate).text
    }

    /// Reads until the peer closes the connection.
    public func readToEnd() async -> Received {
        await receive { _ in false }
    }

    /// Reads until `predicate` holds for the text so far or the peer closes.
    public func receive(until predicate: @escaping @Sendable (String) -> Bool) async -> Received {
        let fd = self.fd
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Received, Never>) in
                let thread = Thread {
                    var received: [UInt8] = []
                    var closed = false
                    while true {
                        var chunk = [UInt8](repeating: 0, count: 65_536)
                        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        if count < 0 && errno == EINTR { continue }
                        if count <= 0 {
                            closed = true
                            break
                        }
                        received += chunk[0..<count]
                        if predicate(String(decoding: received, as: UTF8.self)) { break }
                    }
                    continuation.resume(returning: Received(text: String(decoding: received, as: UTF8.self), closed: closed))
                }
                thread.start()
            }
        } onCancel: {
            // Wakes the blocked recv with an end of stream.
            #if canImport(Glibc)
            _ = shutdown(fd, Int32(SHUT_RD))
            #else
            _ = shutdown(fd, SHUT_RD)
            #endif
        }
    }
}

#if canImport(Glibc)
private func connectSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Glibc.connect(fd, address, length) }
#else
private func connectSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Darwin.connect(fd, address, length) }
#endif

#if canImport(Glibc)
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL)) }
#else
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Darwin.send(fd, bytes, count, 0) }
#endif
