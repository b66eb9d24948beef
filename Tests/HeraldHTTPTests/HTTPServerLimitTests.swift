import Foundation
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import HeraldHTTP
import HeraldIO
import HeraldSync

/// The server's bounds: connections, body bytes held, head time, and what happens when accept
/// runs out of descriptors. Nothing here measures time: deadlines follow an injected clock.
@Suite(.timeLimit(.minutes(5))) struct HTTPServerLimitTests {
    static let health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"

    /// Seams whose clock stands still: no head or idle deadline passes however slow the
    /// machine (a keep-alive connection a test holds open was once closed idle under load).
    static var frozenClock: HTTPServer.Seams {
        var seams = HTTPServer.Seams()
        seams.uptime = { .zero }
        return seams
    }

    /// A server answering every request with the size of its body.
    static func echoServer(limits: HTTPServerLimits, seams: HTTPServer.Seams = frozenClock) throws -> HTTPServer {
        let server = try HTTPServer(port: 0, limits: limits, seams: seams, handler: HTTPClosureHandler { request in
            HTTPServerResponse(status: 200, body: Data("\(request.body.count)".utf8))
        })
        server.start()
        return server
    }

    @Test func connectionsBeyondTheCapAreAnswered503AndClosed() async throws {
        let server = try Self.echoServer(limits: HTTPServerLimits(maxConnections: 2))
        let first = try #require(RawClient(port: server.port))
        let second = try #require(RawClient(port: server.port))
        for client in [first, second] {
            client.send(Self.health)
            _ = await client.read { $0.hasSuffix("\r\n\r\n0") }
        }
        // Both stay open (keep-alive); a third is refused at once, without a thread.
        let third = try #require(RawClient(port: server.port))
        third.send(Self.health)
        let refused = await third.readToEnd()
        #expect(refused.text.hasPrefix("HTTP/1.1 503 Service Unavailable"), "got \(refused.text.debugDescription)")
        #expect(refused.text.contains("Retry-After: 1"))
        #expect(refused.closed)
        #expect(server.requestsReceived == 2)

        // Once one ends, a new connection is served again.
        first.shutdownWriting()
        _ = await first.readToEnd()
        await server.waitUntil { $0.connections.count < 2 }
        let fourth = try #require(RawClient(port: server.port))
        fourth.send(Self.health)
        #expect(await fourth.read { $0.hasSuffix("\r\n\r\n0") }.hasPrefix("HTTP/1.1 200 OK"))
        await server.stop()
    }

    @Test func aBodyThatWouldOverrunTheBudgetIsRefused503BeforeItIsRead() async throws {
        let server = try Self.echoServer(limits: HTTPServerLimits(maxBodyBytes: 1000, maxBufferedBodyBytes: 100))
        // The server reserves a body's bytes before it answers 100 Continue, so once this
        // client reads the 100, 80 of the 100 bytes are held.
        let holder = try #require(RawClient(port: server.port))
        holder.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 80\r\nExpect: 100-continue\r\n\r\n")
        #expect(await holder.read { $0.hasSuffix("\r\n\r\n") }.hasPrefix("HTTP/1.1 100 Continue"))

        let refused = try #require(RawClient(port: server.port))
        refused.send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\nExpect: 100-continue\r\n\r\n")
        let answer = await refused.readToEnd()
        #expect(answer.text.hasPrefix("HTTP/1.1 503 Service Unavailable"), "got \(answer.text.debugDescription)")
        #expect(answer.closed)

        // A chunked body is held chunk by chunk against the same budget.
        let chunked = try #require(RawClient(port: server.port))
        chunked.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n15\r\n")
        #expect(await chunked.readToEnd().text.hasPrefix("HTTP/1.1 503 Service Unavailable"))

        // The held body arrives and is served; its bytes go back to the budget.
        holder.send(String(repeating: "h", count: 80))
        #expect(await holder.read { $0.hasSuffix("\r\n\r\n80") }.contains("HTTP/1.1 200 OK"))
        await server.waitUntil { $0.bufferedBodyBytes == 0 }
        let next = try #require(RawClient(port: server.port))
        next.send("POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\nConnection: close\r\n\r\n" + String(repeating: "n", count: 30))
        #expect(await next.readToEnd().text.hasSuffix("\r\n\r\n30"))
        #expect(server.requestsReceived == 2)
        await server.stop()
    }

    @Test func aBodyOverTheRequestLimitIs413() async throws {
        let server = try Self.echoServer(limits: HTTPServerLimits(maxBodyBytes: 10))
        let client = try #require(RawClient(port: server.port))
        client.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n")
        #expect(await client.readToEnd().text.hasPrefix("HTTP/1.1 413"))
        await server.stop()
    }

    @Test func aDribbledHeadTimesOutFromItsFirstByteNotItsLast() async throws {
        let clock = ManualClock()
        var seams = HTTPServer.Seams()
        seams.uptime = { clock.now.offset }
        let server = try Self.echoServer(limits: HTTPServerLimits(headTimeout: .seconds(10), idleTimeout: .seconds(100)), seams: seams)
        let client = try #require(RawClient(port: server.port))
        client.send("G")
        await server.waitUntil { $0.connections == [.head] }
        // Each byte in time for a per-byte timer, never for the whole head.
        for byte in "ET / HTTP/1.1\r\n" {
            clock.advance(by: .seconds(1))
            client.send(String(byte))
        }
        let received = await client.readToEnd()
        #expect(received.text.hasPrefix("HTTP/1.1 408 Request Timeout"), "got \(received.text.debugDescription)")
        #expect(received.closed)
        #expect(server.requestsReceived == 0)
        await server.stop()
    }

    @Test func aHeadInTimeIsServedAndTheNextRequestGetsAFreshDeadline() async throws {
        let clock = ManualClock()
        var seams = HTTPServer.Seams()
        seams.uptime = { clock.now.offset }
        let server = try Self.echoServer(limits: HTTPServerLimits(headTimeout: .seconds(10)), seams: seams)
        let client = try #require(RawClient(port: server.port))
        client.send("GET / HTTP/1.1\r\n")
        await server.waitUntil { $0.connections == [.head] }
        clock.advance(by: .seconds(9))
        client.send("Host: x\r\n\r\n")
        #expect(await client.read { $0.hasSuffix("\r\n\r\n0") }.hasPrefix("HTTP/1.1 200 OK"))
        clock.advance(by: .seconds(9))
        client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await client.readToEnd().text.hasPrefix("HTTP/1.1 200 OK"))
        await server.stop()
    }

    @Test func acceptOutOfDescriptorsBacksOffOncePerFailureAndRecovers() async throws {
        // accept(2) fails with EMFILE five times, then works: each failure must be followed by
        // one wait, growing, and the pending connection served afterwards.
        let failuresLeft = SyncLock(5)
        let attempts = SyncLock(0)
        let waits = SyncLock<[Duration]>([])
        var seams = Self.frozenClock
        seams.accept = { fd in
            attempts.withLock { $0 += 1 }
            let fail = failuresLeft.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if fail {
                errno = EMFILE
                return -1
            }
            return TCPSocket.systemAccept(fd)
        }
        seams.backoff = { delay in waits.withLock { $0.append(delay) } }
        let server = try Self.echoServer(limits: HTTPServerLimits(), seams: seams)
        let client = try #require(RawClient(port: server.port))
        client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await client.readToEnd().text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(waits.withLock { $0 } == [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(80), .milliseconds(160)])
        #expect(attempts.withLock { $0 } == 6)
        await server.stop()
    }

    @Test func acceptBackoffDoublesToItsCeilingAndResetsOnSuccess() {
        var backoff = AcceptBackoff()
        let waits = (0..<10).map { _ in backoff.failed() }
        #expect(waits.first == .milliseconds(10))
        #expect(waits.last == .seconds(1))
        #expect(zip(waits, waits.dropFirst()).allSatisfy { $1 == min($0 * 2, .seconds(1)) })
        backoff.succeeded()
        #expect(backoff.failed() == .milliseconds(10))
    }

    @Test func interruptedSystemCallsAreRetriedNotTakenForAClose() throws {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        #else
        #expect(socketpair(AF_UNIX, SOCK_STREAM, 0, &fds) == 0)
        #endif
        defer { fds.forEach { TCPSocket.close($0) } }
        #expect(TCPSocket(descriptor: fds[1]).sendAll(Array("hi".utf8)))
        var interruptions = 2
        let read = TCPSocket(descriptor: fds[0]).receiveChunk { fd, buffer, count in
            if interruptions > 0 {
                interruptions -= 1
                errno = EINTR
                return -1
            }
            return recv(fd, buffer, count, 0)
        }
        #expect(read == Array("hi".utf8))
        #expect(interruptions == 0)

        let acceptInterruptions = SyncLock(1)
        let peer = fds[1]
        let accepted = TCPSocket(descriptor: fds[0]).accept { _ in
            if acceptInterruptions.withLock({ left -> Bool in defer { left -= 1 }; return left > 0 }) {
                errno = EINTR
                return -1
            }
            return dup(peer)
        }
        guard case .connection(let fd) = accepted else {
            Issue.record("accept gave \(accepted)")
            return
        }
        TCPSocket.close(fd)
        #expect(TCPSocket(descriptor: fds[0]).accept { _ in errno = EMFILE; return -1 } == .outOfResources(errno: EMFILE))
    }
}
