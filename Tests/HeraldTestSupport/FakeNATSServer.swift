import Foundation
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback server that speaks just enough of the NATS protocol to misbehave on purpose: it
/// accepts every connection, greets it with `INFO` (or stays silent), answers the client's
/// handshake `PING`, and then runs a script of the test's own (close, send garbage, announce a
/// message larger than anything sane, stop answering).
///
/// Each connection is served on a thread of its own with blocking reads and writes, never on the
/// cooperative pool. ``waitForConnections(_:)`` lets a test wait for the n-th connection (a gate,
/// not a sleep). ``stop()`` closes the listener (call it: the accepting thread keeps the server
/// alive until then); connections end when their script ends.
public final class FakeNATSServer: Sendable {
    /// One accepted connection, as a script sees it (used on the connection's own thread only).
    public struct Session: Sendable {
        let descriptor: Int32
        /// How many connections the server had accepted when this one came (1 for the first).
        public let number: Int

        /// Sends `bytes`; false when the client is gone.
        @discardableResult
        public func send(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { sendBytes(descriptor, $0.baseAddress?.advanced(by: offset), $0.count - offset) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }

        /// Sends `text`; false when the client is gone.
        @discardableResult
        public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

        /// Reads until `marker` has arrived (counting from the start of the connection's reads in
        /// this call) or the client closes; true when it arrived.
        @discardableResult
        public func read(until marker: String) -> Bool {
            let wanted = Array(marker.utf8)
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if received.firstRange(of: wanted) != nil { return true }
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                received += chunk[0..<count]
            }
        }

        /// Reads until the client closes, answering each `PING` with a `PONG` when `answeringPings`,
        /// and calling `onPing` for each one seen (before its answer).
        public func readToEnd(answeringPings: Bool = false, onPing: @Sendable () -> Void = {}) {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let ping = Array("PING\r\n".utf8)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                pending += chunk[0..<count]
                while let range = pending.firstRange(of: ping) {
                    pending.removeSubrange(..<range.upperBound)
                    onPing()
                    if answeringPings { send("PONG\r\n") }
                }
                // Keep only what could be the start of a PING cut by the read.
                if pending.count > ping.count { pending.removeFirst(pending.count - ping.count) }
            }
        }
    }

    /// What the server does when a connection comes.
    public enum Greeting: Sendable {
        /// `INFO` with this `max_payload`, then the handshake's `PONG`, then the script.
        case handshake(maxPayload: UInt64)
        /// Nothing at all: the script runs at once (a server that never answers).
        case silent
    }

    /// The TCP port.
    public let port: Int
    private let listener: Int32
    private let state = SyncLock<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)], stopped: Bool)>((0, [], false))

    /// `nats://127.0.0.1:<port>`.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// How many connections were accepted so far.
    public var connections: Int { state.withLock { $0.count } }

    /// Listens on a free loopback port; each connection gets the greeting, then `script`.
    /// - Throws: ``NATSServerProcessError`` when the socket cannot be set up.
    public init(greeting: Greeting = .handshake(maxPayload: 1_048_576), script: @escaping @Sendable (Session) -> Void) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSServerProcessError(message: "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 64) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ready else {
            close(descriptor)
            throw NATSServerProcessError(message: "bind or listen failed: errno \(errno)")
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop(greeting, script) }
    }

    /// Stops accepting (connections already accepted run their scripts to the end).
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        #if canImport(Glibc)
        _ = shutdown(listener, Int32(SHUT_RDWR))
        #else
        _ = shutdown(listener, SHUT_RDWR)
        #endif
    }

    /// Returns once at least `count` connections were accepted.
    public func waitForConnections(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func acceptLoop(_ greeting: Greeting, _ script: @escaping @Sendable (Session) -> Void) {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let (number, ready) = state.withLock { state -> (Int, [CheckedContinuation<Void, Never>]) in
                state.count += 1
                let count = state.count
                let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                state.waiters.removeAll { $0.0 <= count }
                return (count, ready)
            }
            ready.forEach { $0.resume() }
            let session = Session(descriptor: connection, number: number)
            Thread.detachNewThread {
                defer { close(connection) }
                if case .handshake(let maxPayload) = greeting {
                    let info = #"INFO {"server_id":"FAKE","server_name":"fake","version":"2.9.0","proto":1,"headers":true,"#
                        + #""host":"127.0.0.1","port":4222,"max_payload":\#(maxPayload)}"# + "\r\n"
                    guard session.send(info), session.read(until: "PING\r\n"), session.send("PONG\r\n") else { return }
                }
                script(session)
            }
        }
    }
}

#if canImport(Glibc)
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL)) }
#else
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Darwin.send(fd, bytes, count, 0) }
#endif
