import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// Header blocks nats-server passes on as they are (seen with 2.9): too short for `NATS/1.0`
/// and its end, a line without a colon, a bad status, a wrong version, no block at all.
let malformedHeaderBlocks = [
    "NATS/1.0\r\n\n", "NATS/1.0\r\nNoColonHere\r\n\r\n", "NATS/1.0 5x3\r\n\r\n", "NOTS/1.0\r\n\r\n", "NA\r\n",
]

/// A message whose header block is malformed belongs to that message: the connection stays.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"), .timeLimit(.minutes(5)))
struct MalformedMessageTests {
    @Test func aMalformedHeaderBlockIsTheMessagesProblemAndTheConnectionStays() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        defer { Task { await server.stop() } }
        let connection = try NATSConnection(servers: [server.url], name: "reader")
        try await connection.connect()
        let events = ConnectionEvents(connection)
        let subscription = try connection.subscribe("herald.>")
        try await connection.flush()

        // Another program publishes the blocks as they are, then a good message.
        let raw = try #require(RawClient(port: server.port))
        raw.send("CONNECT {\"headers\":true,\"verbose\":false,\"protocol\":1}\r\n")
        for block in malformedHeaderBlocks {
            raw.send("HPUB herald.bad \(block.utf8.count) \(block.utf8.count + 2)\r\n\(block)hi\r\n")
        }
        raw.send("PUB herald.good 2\r\nok\r\nPING\r\n")
        _ = await raw.read { $0.contains("PONG") }
        // The server routed all of them to this connection before it answers this PING.
        try await connection.flush()

        var messages = subscription.makeAsyncIterator()
        for block in malformedHeaderBlocks {
            let message = await messages.next()
            #expect(message?.subject == "herald.bad" && message?.string == "hi", "\(block.debugDescription)")
            #expect(message?.headers == nil, "\(block.debugDescription)")
            #expect(message?.headerProblem?.isEmpty == false, "\(block.debugDescription)")
        }
        let good = await messages.next()
        #expect(good?.subject == "herald.good" && good?.string == "ok" && good?.headerProblem == nil)
        #expect(!events.events.contains { $0.isDisconnected }, "\(events.events)")
        #expect(connection.isConnected)
        await connection.close()
    }
}
