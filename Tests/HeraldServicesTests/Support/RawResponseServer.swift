import HeraldSync
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-connection server on 127.0.0.1 for response shapes the sandbox never sends (chunked,
/// framed by the close, cut short): it accepts one connection on its own thread, reads the
/// request head, writes `response` and closes.
final class RawResponseServer: Sendable {
    struct SetupError: Error {}

    let port: UInt16
    private let listener: Int32
    private enum HeadState {
        case awaited(CheckedContinuation<String, Never>?)
        case received(String)
    }

    private let head = SyncLock(HeadState.awaited(nil))

    init(response: [UInt8]) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SetupError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 4) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ready else {
            close(descriptor)
            throw SetupError()
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve(response) }
        thread.start()
    }

    convenience init(_ response: String) throws {
        try self.init(response: Array(response.utf8))
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The request head the client sent, once it arrived.
    func requestHead() async -> String {
        await withCheckedContinuation { continuation in
            let arrived: String? = head.withLock { state in
                switch state {
                case .received(let text): return text
                case .awaited: state = .awaited(continuation); return nil
                }
            }
            if let arrived { continuation.resume(returning: arrived) }
        }
    }

    private func serve(_ response: [UInt8]) {
        let connection = accept(listener, nil, nil)
        close(listener)
        guard connection >= 0 else { return }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !bytes.containsHeadEnd {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let waiting: CheckedContinuation<String, Never>? = head.withLock { state in
            defer { state = .received(text) }
            if case .awaited(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume(returning: text)
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
        // Half-close and drain, so a body still unread never turns the close into a reset.
        #if canImport(Glibc)
        _ = shutdown(connection, Int32(SHUT_WR))
        #else
        _ = shutdown(connection, SHUT_WR)
        #endif
        while chunk.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {}
        close(connection)
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        count >= 4 && (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
