import Foundation
import HeraldSync
import HeraldTestSupport
import Testing

@testable import HeraldHTTP

/// Streamed responses: written on the connection's thread when notified, ended by the client
/// going away, by the server stopping, or by ``HTTPStreamConnection/close()`` from elsewhere.
@Suite(.timeLimit(.minutes(5))) struct HTTPStreamTests {
    /// A server whose `/stream` writes each message the test queues, and records how it ended.
    final class Streamer: Sendable {
        /// What the stream's body and the test share.
        final class Shared: Sendable {
            let queued = SyncLock<[String]>([])
            let endings = SyncLock<[HTTPStreamConnection.Wait]>([])
            let connection = SyncLock<HTTPStreamConnection?>(nil)
            let abandoned = SyncLock(0)
        }

        let notifier: HTTPStreamNotifier
        let shared = Shared()
        let server: HTTPServer
        var endings: [HTTPStreamConnection.Wait] { shared.endings.withLock { $0 } }
        var connection: HTTPStreamConnection? { shared.connection.withLock { $0 } }

        init() throws {
            let notifier = try HTTPStreamNotifier()
            let shared = shared
            self.notifier = notifier
            server = try HTTPServer(port: 0, handler: HTTPClosureHandler { request in
                guard request.path == "/stream" else { return .text(404, "no") }
                return .streaming(headers: [("Content-Type", "text/event-stream")], HTTPResponseStream({ stream in
                    shared.connection.withLock { $0 = stream }
                    while true {
                        let woke = stream.wait(for: notifier)
                        guard woke == .notified else {
                            shared.endings.withLock { $0.append(woke) }
                            return
                        }
                        for message in shared.queued.withLock({ q in defer { q = [] }; return q }) where !stream.write(Array(message.utf8)) {
                            shared.endings.withLock { $0.append(.closed) }
                            return
                        }
                    }
                }, abandoned: { shared.abandoned.withLock { $0 += 1 } }))
            })
            server.start()
        }

        func push(_ message: String) {
            shared.queued.withLock { $0.append(message) }
            notifier.notify()
        }
    }

    @Test func aStreamWritesWhatItIsNotifiedOfAndEndsWhenTheClientGoesAway() async throws {
        let streamer = try Streamer()
        let client = try #require(RawClient(port: streamer.server.port))
        client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        await streamer.server.waitUntil { $0.connections == [.streaming] }
        streamer.push("one\n")
        let head = await client.read { $0.hasSuffix("one\n") }
        #expect(head.hasPrefix("HTTP/1.1 200 OK"))
        #expect(head.contains("Connection: close"))
        #expect(!head.contains("Content-Length"), "a stream's end is its close: \(head.debugDescription)")
        streamer.push("two\n")
        streamer.push("three\n")
        #expect(await client.read { $0.hasSuffix("three\n") }.hasSuffix("two\nthree\n"))
        client.shutdownWriting()
        await streamer.server.waitUntil { $0.connections.isEmpty }
        #expect(streamer.endings == [.closed])
        await streamer.server.stop()
    }

    @Test func stoppingTheServerEndsAStreamInProgress() async throws {
        let streamer = try Streamer()
        let client = try #require(RawClient(port: streamer.server.port))
        client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        await streamer.server.waitUntil { $0.connections == [.streaming] }
        await streamer.server.stop()
        #expect(await client.readToEnd().closed)
        #expect(streamer.endings == [.closed])
    }

    @Test func closingFromAnotherThreadEndsAStreamWhoseClientDoesNotRead() async throws {
        let streamer = try Streamer()
        let client = try #require(RawClient(port: streamer.server.port))
        client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        await streamer.server.waitUntil { $0.connections == [.streaming] }
        // Far more than the socket buffers hold: the stream's write blocks, as it would for a
        // client that stopped reading, until close() shuts the connection down.
        streamer.push(String(repeating: "x", count: 16 * 1024 * 1024))
        let connection = try #require(streamer.connection)
        connection.close()
        await streamer.server.waitUntil { $0.connections.isEmpty }
        #expect(streamer.endings == [.closed])
        connection.close()  // after the end: does nothing
        await streamer.server.stop()
    }

    @Test func headOfAStreamGetsTheHeadOnly() async throws {
        let streamer = try Streamer()
        let client = try #require(RawClient(port: streamer.server.port))
        client.send("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let received = await client.readToEnd()
        #expect(received.text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(received.text.hasSuffix("\r\n\r\n"))
        #expect(streamer.endings.isEmpty)
        #expect(streamer.shared.abandoned.withLock { $0 } == 1, "a HEAD's stream is abandoned, so its handler can let go")
        await streamer.server.stop()
    }

    @Test func aHostThatIsNotAnIPv4AddressIsRefusedByName() throws {
        #expect(throws: HTTPServerError(operation: "localhost:x is not an IPv4 address", code: 0)) {
            try HTTPServer(host: "localhost:x", port: 0, handler: HTTPClosureHandler { _ in .text(200, "") })
        }
    }
}
