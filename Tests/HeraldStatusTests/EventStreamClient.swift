import Foundation
import HeraldSync
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Server-Sent Events client for the tests, on a socket read by a thread of its own: it
/// parses `/events` as it arrives (messages of `id:` and `data:` lines, comments skipped) and
/// lets a test await a count of messages without sleeping. `reading: false` sends the request
/// and then never reads, as a stuck client would.
final class EventStreamClient: Sendable {
    struct Message: Sendable, Hashable {
        var id: String
        var data: String
    }

    private struct State {
        var messages: [Message] = []
        var count = 0
        var opened = false
        var closed = false
        var head = ""
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let fd: Int32
    private let keep: Bool
    private let state = SyncLock(State())

    /// Connects to `127.0.0.1:port` and asks for `/events?query`; nil when nothing listens.
    init?(port: Int, query: String = "", reading: Bool = true, keep: Bool = true) {
        guard let fd = RawClient.connect(port: port, prepare: { fd in
            guard !reading else { return }
            // A small receive buffer, so a client that does not read fills up soon.
            var size: Int32 = 4096
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }) else { return nil }
        self.fd = fd
        self.keep = keep
        let request = Array("GET /events\(query.isEmpty ? "" : "?" + query) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard reading else { return }
        let thread = Thread { [self] in readLoop() }
        thread.start()
    }

    deinit { close(fd) }

    var messages: [Message] { state.withLock { $0.messages } }
    var count: Int { state.withLock { $0.count } }
    var isClosed: Bool { state.withLock { $0.closed } }
    var head: String { state.withLock { $0.head } }

    /// Returns once `condition` (on the count of messages, and whether the stream opened)
    /// holds, or the stream closed; false when it closed first.
    @discardableResult
    func wait(until condition: @escaping @Sendable (Int, Bool) -> Bool) async -> Bool {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if condition(state.count, state.opened) || state.closed { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
            let (holds, closed) = state.withLock { (condition($0.count, $0.opened), $0.closed) }
            if holds { return true }
            if closed { return false }
        }
    }

    /// Returns once the server's opening comment arrived (the client is subscribed).
    @discardableResult
    func waitUntilOpen() async -> Bool { await wait { _, opened in opened } }

    /// Returns once `count` messages arrived; false when the stream closed first.
    @discardableResult
    func waitForMessages(_ count: Int) async -> Bool { await wait { seen, _ in seen >= count } }

    /// Closes the connection both ways, as a client going away does.
    func shutdown() {
        #if canImport(Glibc)
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
        #else
        _ = Darwin.shutdown(fd, SHUT_RDWR)
        #endif
    }

    private func readLoop() {
        var buffer: [UInt8] = []
        var headDone = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer += chunk[0..<count]
            var parsed: [Message] = []
            var opened = false
            var head: String?
            if !headDone, let end = Self.find(Array("\r\n\r\n".utf8), in: buffer, from: 0) {
                head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                headDone = true
            }
            guard headDone else { continue }
            var start = 0
            while let end = Self.find([10, 10], in: buffer, from: start) {
                let block = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 2
                var id: String?, data: String?
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(": herald events") { opened = true }
                    if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                }
                if let id, let data { parsed.append(Message(id: id, data: data)) }
            }
            buffer.removeFirst(start)
            let waiters = state.withLock { state in
                if let head { state.head = head }
                if opened { state.opened = true }
                state.count += parsed.count
                if keep { state.messages += parsed }
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.resume() }
        }
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], Array(haystack[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }
}
