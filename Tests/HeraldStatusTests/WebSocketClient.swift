import Foundation
import HeraldIO
import HeraldSync
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small RFC 6455 WebSocket client for the DevTools protocol: text messages only, frames from
/// the server unmasked (continuations joined), ours masked. Its socket is read by a thread of
/// its own and written on another, never on the cooperative pool.
final class WebSocketClient: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private let writer = BlockingIOThread(name: "test.websocket-write")
    private let onMessage: @Sendable (String) -> Void
    private let onClose: @Sendable () -> Void

    /// Connects to `ws://127.0.0.1:port/path` and completes the opening handshake.
    static func connect(port: Int, path: String, onMessage: @escaping @Sendable (String) -> Void,
                        onClose: @escaping @Sendable () -> Void) async throws -> WebSocketClient {
        let fd: Int32 = try await BlockingIOThread(name: "test.websocket-connect").run { () throws(Failure) -> Int32 in
            try handshake(port: port, path: path)
        }
        return WebSocketClient(fd: fd, onMessage: onMessage, onClose: onClose)
    }

    private init(fd: Int32, onMessage: @escaping @Sendable (String) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.onMessage = onMessage
        self.onClose = onClose
        let thread = Thread { [self] in readLoop() }
        thread.name = "test.websocket-read"
        thread.start()
    }

    deinit { close(fd) }

    /// Sends one text message.
    func send(_ text: String) async {
        let frame = Self.frame(Array(text.utf8))
        let fd = fd
        await writer.run { _ = Self.write(fd, frame) }
    }

    /// Closes the connection; the reading thread ends.
    func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: Wire

    private static func handshake(port: Int, path: String) throws(Failure) -> Int32 {
        guard let fd = RawClient.connect(port: port) else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        guard write(fd, Array(request.utf8)) else { throw Failure(description: "handshake not sent") }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            guard recv(fd, &byte, 1, 0) == 1 else {
                close(fd)
                throw Failure(description: "handshake: connection closed after \(String(decoding: head, as: UTF8.self).debugDescription)")
            }
            head.append(byte)
        }
        let text = String(decoding: head, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 101") else {
            close(fd)
            throw Failure(description: "handshake refused: \(text)")
        }
        return fd
    }

    private static func frame(_ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (UInt64($0) * 8)) & 0xFF) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private func readExactly(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            offset += got
        }
        return bytes
    }

    private func readLoop() {
        defer { onClose() }
        var message: [UInt8] = []
        while let header = readExactly(2) {
            let final = header[0] & 0x80 != 0
            let opcode = header[0] & 0x0F
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                guard let extended = readExactly(2) else { return }
                length = Int(extended[0]) << 8 | Int(extended[1])
            } else if length == 127 {
                guard let extended = readExactly(8) else { return }
                length = extended.reduce(0) { $0 << 8 | Int($1) }
            }
            guard let payload = length == 0 ? [] : readExactly(length) else { return }
            switch opcode {
            case 0x8: return  // close
            case 0x9, 0xA: continue  // ping, pong: Chromium sends none to a client that sends none
            default:
                message += payload
                if final {
                    onMessage(String(decoding: message, as: UTF8.self))
                    message = []
                }
            }
        }
    }
}
