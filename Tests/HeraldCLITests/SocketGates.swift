import Foundation
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that takes one connection and never answers: a gate that opens
/// when the client's request arrives, and another when the client closes the connection.
/// Accepting and reading block a thread of its own.
final class HoldingServer: Sendable {
    let port: Int
    /// Opened when a connection came.
    let arrived = Gate()
    /// Opened when the client closed it (or it failed).
    let closed = Gate()
    private let listener: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0 else { throw CocoaError(.fileWriteUnknown) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let (arrived, closed) = (arrived, closed)
        Thread.detachNewThread {
            let connection = accept(fd, nil, nil)
            arrived.open()
            guard connection >= 0 else {
                closed.open()
                return
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
            close(connection)
            closed.open()
        }
    }

    deinit { close(listener) }
}

/// A datagram socket that receives systemd notifications, as the service manager would: bound
/// to a path, or to an abstract name (given with a leading `@`). Each message is kept.
final class NotifyListener: Sendable {
    /// `NOTIFY_SOCKET`'s value for it.
    let address: String
    private let messages = OutputBuffer()
    private let fd: Int32

    init(address: String) throws {
        self.address = address
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var name = Array(address.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { bytes in
            for (index, byte) in name.enumerated() { bytes[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0 else { throw CocoaError(.fileWriteUnknown) }
        let (descriptor, messages) = (fd, messages)
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                messages.append(Data(buffer[0..<count]) + Data("\n\n".utf8))
            }
            messages.close()
        }
    }

    /// The messages so far, each as sent (assignments separated by newlines).
    var received: [String] {
        messages.text.components(separatedBy: "\n\n").filter { !$0.isEmpty }
    }

    /// Waits (bounded by the test's limit) until `condition` holds for the messages received.
    func wait(_ condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        await messages.wait(within: .seconds(300)) { text in condition(text.components(separatedBy: "\n\n").filter { !$0.isEmpty }) }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
