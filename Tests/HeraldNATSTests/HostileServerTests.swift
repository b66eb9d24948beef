import Foundation
import HeraldNATS
import HeraldSync
import HeraldTestSupport
import Testing

/// The attempts a reconnect backoff was asked for, in order.
private final class Attempts: Sendable {
    private let values = SyncLock<[Int]>([])
    func record(_ attempt: Int) { values.withLock { $0.append(attempt) } }
    var all: [Int] { values.withLock { $0 } }
}

/// A count of what a fake server's script saw.
private final class Counter: Sendable {
    private let value = SyncLock(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Servers that accept the handshake and then misbehave: the backoff grows, the cause is named,
/// a message larger than the client accepts is passed over, and one larger than any server sends
/// ends the connection whatever the server said.
@Suite(.timeLimit(.minutes(5)))
struct HostileServerTests {
    /// Before: the backoff restarted at every handshake, so such a server got hundreds of
    /// reconnects a second.
    @Test(arguments: ["closes", "sends garbage", "announces an oversized message", "answers the PING, then closes"])
    func aServerThatFailsRightAfterTheHandshakeGetsAGrowingBackoff(_ misbehaviour: String) async throws {
        let server = try FakeNATSServer { session in
            switch misbehaviour {
            case "sends garbage":
                session.send("GARBAGE\r\n")
                session.readToEnd()
            case "announces an oversized message":
                session.send("MSG herald.x 1 2147483648\r\n")
                session.readToEnd()
            case "answers the PING, then closes":
                // The health PING answered: the connection looks healthy for a moment only.
                if session.read(until: "PING\r\n") { session.send("PONG\r\n") }
            default:
                break  // the connection closes after the handshake
            }
        }
        defer { server.stop() }
        let attempts = Attempts()
        var options = NATSConnectionOptions(servers: [server.url], name: "storm")
        // No connection here stays up long enough to count as healthy, however slow the machine.
        options.healthyUptime = .seconds(3600)
        options.reconnectDelay = { attempt in
            attempts.record(attempt)
            return .milliseconds(1)
        }
        let connection = try NATSConnection(options: options)
        let events = ConnectionEvents(connection)
        try await connection.connect()
        await server.waitForConnections(6)
        await connection.close()
        #expect(Array(attempts.all.prefix(5)) == [1, 2, 3, 4, 5], "\(attempts.all)")
        let reasons = events.events.compactMap { event -> String? in
            if case .disconnected(_, let reason) = event { return reason }
            return nil
        }
        #expect(!reasons.isEmpty)
    }

    /// Bytes that came in the same read as the handshake's `PONG` are handled at once: the
    /// socket does not signal them again. Before: they waited in the parser for the next bytes
    /// from the server, so garbage right behind the `PONG` was noticed only at the next ping (an
    /// hour here; seen in CI as a hung reconnect test).
    @Test(arguments: ["GARBAGE\r\n", "MSG herald.x 1 2147483648\r\n"])
    func whatFollowsTheHandshakesPONGInTheSameReadIsHandledAtOnce(_ trailer: String) async throws {
        let server = try FakeNATSServer(greeting: .silent) { session in
            let info = #"INFO {"server_id":"FAKE","version":"2.9.0","proto":1,"headers":true,"max_payload":1048576}"# + "\r\n"
            guard session.send(info), session.read(until: "PING\r\n") else { return }
            session.send("PONG\r\n" + trailer)
            session.readToEnd()
        }
        defer { server.stop() }
        var options = NATSConnectionOptions(servers: [server.url], name: "trailer")
        options.allowReconnect = false
        options.pingInterval = .seconds(3600)
        let connection = try NATSConnection(options: options)
        let events = ConnectionEvents(connection)
        try await connection.connect()
        let dropped = await events.next { $0.isDisconnected }
        guard case .disconnected(_, let reason)? = dropped else {
            Issue.record("no disconnect: \(events.events)")
            return
        }
        #expect(reason.contains("not the NATS protocol"), "\(reason)")
        await connection.close()
    }

    /// The server's `max_payload` (4 GiB here) does not raise what the client buffers: a 9 MiB
    /// message (more than the 8 MiB it takes by default) is read and dropped as it comes, handed
    /// over without its bytes, and the connection stays, so a message a JetStream server stored
    /// under a larger limit cannot cost the connection at each delivery. Before: a protocol error
    /// that dropped the connection.
    @Test func aMessageLargerThanTheClientAcceptsIsPassedOverAndTheConnectionStays() async throws {
        let size = 9 * 1024 * 1024
        let server = try FakeNATSServer(greeting: .handshake(maxPayload: 4 << 30)) { session in
            guard session.number == 1, session.read(until: "SUB big 1\r\n") else { return }
            session.send("MSG big 1 _INBOX.reply \(size)\r\n")
            session.send([UInt8](repeating: UInt8(ascii: "a"), count: size) + [13, 10])
            session.send("MSG big 1 2\r\nok\r\n")
            session.readToEnd(answeringPings: true)
        }
        defer { server.stop() }
        var options = NATSConnectionOptions(servers: [server.url], name: "payload-cap")
        options.allowReconnect = false
        let connection = try NATSConnection(options: options)
        let events = ConnectionEvents(connection)
        try await connection.connect()
        let subscription = try connection.subscribe("big")
        var messages = subscription.makeAsyncIterator()
        let oversized = await messages.next()
        #expect(oversized?.oversize == size && oversized?.payload.isEmpty == true && oversized?.headers == nil, "\(String(describing: oversized?.oversize))")
        #expect(oversized?.replyTo == "_INBOX.reply")
        // The message behind it came on the same connection (the server sends nothing to another).
        #expect(await messages.next()?.string == "ok")
        #expect(connection.isConnected)
        #expect(!events.events.contains { $0.isDisconnected }, "\(events.events)")
        await connection.close()
    }

    /// What no NATS server sends (more than 64 MiB) is still a protocol error at its control line,
    /// whatever the server announced: nothing of it is read.
    @Test func aMessageLargerThanAnyServerSendsEndsTheConnectionWhateverTheServerAnnounced() async throws {
        let server = try FakeNATSServer(greeting: .handshake(maxPayload: 4 << 30)) { session in
            guard session.number == 1 else { return }
            session.send("MSG big 1 \(2 << 30)\r\n")
            session.readToEnd()
        }
        defer { server.stop() }
        var options = NATSConnectionOptions(servers: [server.url], name: "payload-cap")
        options.allowReconnect = false
        let connection = try NATSConnection(options: options)
        let events = ConnectionEvents(connection)
        try await connection.connect()
        let dropped = await events.next { $0.isDisconnected }
        guard case .disconnected(_, let reason)? = dropped else {
            Issue.record("no disconnect: \(events.events)")
            return
        }
        #expect(reason.contains("exceeds the maximum payload of 8388608 and the 67108864 bytes"), "\(reason)")
        await connection.close()
    }

    /// A request that times out makes the client ping the server at once (the keep-alive would
    /// wait for its interval, an hour here), so a dead server is found by what the node does.
    @Test func aRequestThatTimesOutMakesTheClientPingTheServerAtOnce() async throws {
        let pings = Counter()
        let server = try FakeNATSServer { session in
            session.readToEnd(answeringPings: true) { pings.increment() }
        }
        defer { server.stop() }
        var options = NATSConnectionOptions(servers: [server.url], name: "probe")
        options.pingInterval = .seconds(3600)
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        try await connection.flush()
        let before = pings.count
        await #expect(throws: NATSError.self) { _ = try await connection.request("nobody.answers", timeout: .milliseconds(50)) }
        try await connection.flush()
        // The probe and the flush, each answered in order: the flush returns after both.
        #expect(pings.count == before + 2)
        await connection.close()
    }
}
