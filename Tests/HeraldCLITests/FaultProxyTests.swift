import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The nemesis's fault proxy does what each mode says, against a loopback echo server of the
/// test's own: pass, delay (late, not lost), blackhole and one-way drops (nothing through, the
/// connection stays open), reset (the client sees its connection end), reset inside a frame
/// after some bytes, and holding the rest of a frame once a marker passed.
struct FaultProxyTests {
    /// A blocking loopback client on a thread of its own: sends, reads with a receive timeout
    /// (a bound on a read that must not answer, not a wait for something to happen).
    final class Client: Sendable {
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = FaultProxy.loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        }

        deinit { close(descriptor) }

        func send(_ text: String) {
            _ = Array(text.utf8).withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Reads until `count` bytes came, the connection ended (nil) or `limit` passed without bytes.
        func read(_ count: Int, limit: Int = 10) async -> String? {
            let descriptor = descriptor
            return try? await onDedicatedThread {
                var timeout = timeval(tv_sec: limit, tv_usec: 0)
                _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 1024)
                while received.count < count {
                    let got = recv(descriptor, &buffer, buffer.count, 0)
                    if got > 0 { received += buffer[0..<got] } else if got == 0 || errno != EAGAIN { return nil } else { break }
                }
                return String(decoding: received, as: UTF8.self)
            }
        }
    }

    /// An echo server on a free port: each connection on a thread, every byte sent back.
    static func echoServer() throws -> Int {
        let port = try NATSServerProcess.freePort()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = FaultProxy.loopback(port: port)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(listener, 8)
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread {
                    var buffer = [UInt8](repeating: 0, count: 1024)
                    while true {
                        let count = recv(connection, &buffer, buffer.count, 0)
                        guard count > 0 else { break }
                        _ = Glibc.send(connection, buffer, count, Int32(MSG_NOSIGNAL))
                    }
                    close(connection)
                }
            }
        }
        return port
    }

    @Test func eachModeDoesWhatItSays() async throws {
        let proxy = try FaultProxy(name: "test", target: try Self.echoServer())
        defer { proxy.shutdown() }
        let client = try Client(port: proxy.port)
        client.send("pass")
        #expect(await client.read(4) == "pass")

        proxy.mode = .delay(.milliseconds(200))
        let sent = ContinuousClock.now
        client.send("slow")
        #expect(await client.read(4) == "slow")
        // Delayed both ways: at least twice the delay (a lower bound, which load cannot break).
        #expect(ContinuousClock.now - sent >= .milliseconds(400))

        for mode in [FaultProxy.Mode.blackhole, .dropToServer, .dropToClient] {
            proxy.mode = mode
            client.send("lost")
            #expect(await client.read(4, limit: 1) == "", "\(mode): nothing comes back, and the connection stays open")
        }
        // Back to pass, the connection that lost bytes is reset; a new one passes.
        proxy.mode = .pass
        #expect(await client.read(1) == nil)
        let second = try Client(port: proxy.port)
        second.send("again")
        #expect(await second.read(5) == "again")
        proxy.resetAll()
        #expect(await second.read(1) == nil)
        #expect(proxy.accepted == 2)
    }

    @Test func aConnectionIsResetInsideAFrameAfterItsBytesAndNeverRightAfterALineEnd() async throws {
        let proxy = try FaultProxy(name: "test", target: try Self.echoServer())
        defer { proxy.shutdown() }
        proxy.mode = .resetAfter(bytes: 6)
        let client = try Client(port: proxy.port)
        // Six bytes would end on a line end: the cut moves one byte on, inside "efgh".
        client.send("ab\ncd\nefgh\n")
        #expect(await client.read(7) == "ab\ncd\ne")
        #expect(await client.read(1) == nil, "the connection is reset after the cut")
        #expect(proxy.cutsInsideFrames == 1)
        // Back to pass, a new connection carries everything.
        proxy.mode = .pass
        let second = try Client(port: proxy.port)
        second.send("ab\ncd\nefgh\n")
        #expect(await second.read(11) == "ab\ncd\nefgh\n")
    }

    @Test func aConnectionHoldsTheRestOfAFrameAfterHalfItsMarkerUntilTheModeChanges() async throws {
        let proxy = try FaultProxy(name: "test", target: try Self.echoServer())
        defer { proxy.shutdown() }
        proxy.mode = .holdInside(marker: "WXYZ")
        let client = try Client(port: proxy.port)
        client.send("hello WXYZ tail\n")
        #expect(await client.read(8) == "hello WX")
        client.send("more\n")
        #expect(await client.read(1, limit: 1) == "", "the rest is held, the connection stays open")
        #expect(proxy.holds == 1)
        proxy.mode = .pass
        #expect(await client.read(13) == "YZ tail\nmore\n")
    }
}
