import Foundation
import HeraldIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one socket layer: the result enum of reads and writes, waits on a socket and a wake
/// pipe, and connect's errors.
@Suite struct SocketLayerTests {
    /// A connected pair of non-blocking Unix stream sockets.
    static func pair() throws -> (TCPSocket, TCPSocket) {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        #else
        try #require(socketpair(AF_UNIX, SOCK_STREAM, 0, &fds) == 0)
        #endif
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (TCPSocket(descriptor: fds[0]), TCPSocket(descriptor: fds[1]))
    }

    @Test func readsAndWritesSayWhatToWaitForAndWhenThePeerIsGone() throws {
        var (reader, writer) = try Self.pair()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == .wantRead)
        #expect(Array("hi".utf8).withUnsafeBytes { writer.write($0) } == .bytes(2))
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == .bytes(2))
        writer.close()
        #expect(buffer.withUnsafeMutableBytes { reader.read(into: $0) } == .closed)
        // Writing to a peer that is gone fails with EPIPE, and raises no SIGPIPE (which would
        // end this test process).
        let (lonely, gone) = try Self.pair()
        TCPSocket.close(gone.descriptor)
        guard case .failed(let error) = Array("x".utf8).withUnsafeBytes({ lonely.send($0) }) else {
            Issue.record("a write to a closed peer did not fail")
            return
        }
        #expect(error.code == EPIPE)
        #expect(error.description == SystemError.text(EPIPE))
        reader.close()
        TCPSocket.close(lonely.descriptor)
    }

    @Test func aFullSendBufferAsksToWaitForOutput() throws {
        let (quiet, writer) = try Self.pair()
        defer { TCPSocket.close(quiet.descriptor); TCPSocket.close(writer.descriptor) }
        let chunk = [UInt8](repeating: 7, count: 65_536)
        var last = IOResult.bytes(0)
        for _ in 0..<1_000 {
            last = chunk.withUnsafeBytes { writer.send($0) }
            if last == .wantWrite { break }
        }
        #expect(last == .wantWrite)
    }

    @Test func theWakePipeEndsAWaitOnlyWhenStopSaysSo() throws {
        let (reader, writer) = try Self.pair()
        let wake = try WakePipe()
        defer { wake.close(); TCPSocket.close(reader.descriptor); TCPSocket.close(writer.descriptor) }
        let later = ContinuousClock.now + .seconds(600)

        wake.signal()
        #expect(Poll.wait(reader.descriptor, for: Poll.input, wake: wake.readEnd, deadline: later, stop: { true }) == .stopped)

        // A wake-up meant for something else is drained and the wait goes on to the socket.
        wake.signal()
        _ = Array("x".utf8).withUnsafeBytes { writer.send($0) }
        var asked = 0
        let outcome = Poll.wait(reader.descriptor, for: Poll.input, wake: wake.readEnd, deadline: later) {
            asked += 1
            return false
        }
        guard case .ready(let events) = outcome else {
            Issue.record("the wait ended with \(outcome)")
            return
        }
        #expect(events & Poll.input != 0)
        #expect(asked == 1)
        // Drained: nothing left on the pipe.
        #expect(Poll.wait(readable: -1, wakers: [wake.readEnd], milliseconds: 0) == .timedOut)
    }

    @Test func aPassedDeadlineEndsTheWait() throws {
        let (reader, writer) = try Self.pair()
        let wake = try WakePipe()
        defer { wake.close(); TCPSocket.close(reader.descriptor); TCPSocket.close(writer.descriptor) }
        #expect(Poll.wait(reader.descriptor, for: Poll.input, wake: wake.readEnd, deadline: .now - .seconds(1)) == .timedOut)
    }

    @Test func connectingToAPortNobodyListensOnFailsWithTheErrno() throws {
        let probe = try TCPSocket.listen(port: 0)
        TCPSocket.close(probe.socket.descriptor)
        let wake = try WakePipe()
        defer { wake.close() }
        #expect(throws: TCPSocket.ConnectError.failed(SystemError(errno: ECONNREFUSED))) {
            try TCPSocket.connect(host: "127.0.0.1", port: probe.port, before: .now + .seconds(600), wake: wake.readEnd)
        }
    }

    @Test func connectingToAListenerGivesANonBlockingSocket() throws {
        let listening = try TCPSocket.listen(port: 0)
        let wake = try WakePipe()
        defer { wake.close(); TCPSocket.close(listening.socket.descriptor) }
        let socket = try TCPSocket.connect(host: "localhost", port: listening.port, before: .now + .seconds(600), wake: wake.readEnd)
        defer { TCPSocket.close(socket.descriptor) }
        #expect(fcntl(socket.descriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(socket.descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func listeningOnWhatIsNotAnIPv4AddressIsRefusedNamingIt() {
        #expect(throws: SystemError("example.com is not an IPv4 address")) { try TCPSocket.listen(host: "example.com", port: 0) }
    }

    @Test func aNameThatDoesNotResolveSaysSo() throws {
        let wake = try WakePipe()
        defer { wake.close() }
        do {
            _ = try TCPSocket.connect(host: "no-such-host.invalid", port: 80, before: .now + .seconds(600), wake: wake.readEnd)
            Issue.record("a name that does not resolve connected")
        } catch {
            guard case .unresolved = error else {
                Issue.record("expected unresolved, got \(error)")
                return
            }
            #expect(error.description.hasPrefix("the host does not resolve ("))
        }
    }
}
