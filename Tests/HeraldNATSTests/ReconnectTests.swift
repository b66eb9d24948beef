import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// Reconnect across a real server restart: re-subscription, buffered publishes, bounded drops.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct ReconnectTests {
    static func options(_ server: NATSServerProcess) -> NATSConnectionOptions {
        var options = NATSConnectionOptions(servers: [server.url], name: "reconnect-test")
        options.reconnectDelay = { _ in .milliseconds(20) }
        return options
    }

    @Test func subscriptionsSurviveAServerRestartAndBufferedPublishesArrive() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        let connection = try NATSConnection(options: Self.options(server))
        try await connection.connect()
        let events = ConnectionEvents(connection)
        let subscription = try connection.subscribe("greet.>")
        var messages = subscription.makeAsyncIterator()
        try connection.publish("greet.before", payload: Array("1".utf8))
        #expect(await messages.next()?.subject == "greet.before")

        await server.halt()
        #expect(await events.next { $0.isDisconnected } != nil)
        try connection.publish("greet.during", payload: Array("2".utf8))
        #expect(!connection.isConnected)

        try await server.restart()
        #expect(await events.next { $0.isReconnected } == .reconnected(server: "127.0.0.1:\(server.port)"))
        #expect(await messages.next()?.subject == "greet.during")

        let other = try NATSConnection(servers: [server.url])
        try await other.connect()
        try await connection.flush()
        try other.publish("greet.after", payload: Array("3".utf8))
        #expect(await messages.next()?.subject == "greet.after")
        #expect(connection.statistics.reconnects == 1)
        await other.close()
        await connection.close()
        #expect(await events.next { $0.isClosed } == .closed(reason: "closed by the client"))
        await server.stop()
    }

    @Test func publishesBeyondTheReconnectBufferAreRefusedAndReported() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        var options = Self.options(server)
        options.reconnectBufferMessages = 3
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        let events = ConnectionEvents(connection)
        let subscription = try connection.subscribe("buffered")
        try await connection.flush()

        await server.halt()
        await events.next { $0.isDisconnected }
        var refused = 0
        for index in 0..<5 {
            do {
                try connection.publish("buffered", payload: Array("\(index)".utf8))
            } catch {
                #expect(error.kind == .bufferFull)
                refused += 1
            }
        }
        #expect(refused == 2)
        await #expect(throws: NATSError.self) { try await connection.flush() }

        try await server.restart()
        await events.next { $0.isReconnected }
        let dropped = events.events.map(\.droppedMessages).reduce(0, +)
        #expect(dropped == 2)
        #expect(connection.statistics.droppedPublishes == 2)
        var received: [String] = []
        for await message in subscription {
            received.append(message.string)
            if received.count == 3 { break }
        }
        #expect(received == ["0", "1", "2"])
        await connection.close()
        await server.stop()
    }

    /// Before: a request made while the client waited between connections never timed out
    /// until the next connection (here an hour away); a lease renewal then hung for the outage.
    @Test(.timeLimit(.minutes(5))) func aRequestTimesOutWhileTheClientWaitsToReconnect() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        var options = Self.options(server)
        // The first attempt after the drop at once (a connection up for less than 2 s counts
        // as a failure, so even that one waits its backoff), then an hour before the next.
        options.reconnectDelay = { attempt in attempt == 1 ? .zero : .seconds(3600) }
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        let events = ConnectionEvents(connection)
        await server.halt()
        await events.next { $0.isConnectFailed }
        let error = await #expect(throws: NATSError.self) {
            _ = try await connection.request("anyone", timeout: .milliseconds(100))
        }
        #expect(error?.kind == .timeout)
        await connection.close()
        await server.stop()
    }

    @Test func closingDuringBackoffEndsTheConnection() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        var options = Self.options(server)
        // The first attempt after the drop at once (a connection up for less than 2 s counts
        // as a failure, so even that one waits its backoff), then an hour before the next.
        options.reconnectDelay = { attempt in attempt == 1 ? .zero : .seconds(3600) }
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        let events = ConnectionEvents(connection)
        await server.halt()
        await events.next { $0.isConnectFailed }
        await connection.close()
        #expect(await events.next { $0.isClosed } == .closed(reason: "closed by the client"))
        #expect(throws: NATSError.self) { try connection.publish("x", payload: []) }
        await server.stop()
    }
}
