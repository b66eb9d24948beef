import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// The core protocol against a real nats-server on a free port.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct CoreProtocolTests {
    @Test func publishedMessageReachesSubscriberWithHeadersAndReply() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        let connection = try NATSConnection(servers: [server.url], name: "core-test")
        try await connection.connect()
        let subscription = try connection.subscribe("orders.*")
        try await connection.flush()

        try connection.publish("orders.new", payload: Array("plain".utf8))
        var headers = NATSHeaders()
        headers["Herald-Node"] = "a"
        headers.append("Multi", "1")
        headers.append("Multi", "2")
        try connection.publish("orders.paid", reply: "answers.here", headers: headers, payload: Array("with headers".utf8))
        try connection.publish("other.subject", payload: Array("not for us".utf8))
        try connection.publish("orders.empty")

        var received: [NATSMessage] = []
        for await message in subscription {
            received.append(message)
            if received.count == 3 { break }
        }
        #expect(received.map(\.subject) == ["orders.new", "orders.paid", "orders.empty"])
        #expect(received[0].string == "plain")
        #expect(received[0].headers == nil)
        #expect(received[1].string == "with headers")
        #expect(received[1].replyTo == "answers.here")
        #expect(received[1].headers?["Herald-Node"] == "a")
        #expect(received[1].headers?.values(for: "Multi") == ["1", "2"])
        #expect(received[2].payload.isEmpty)
        await connection.close()
        await server.stop()
    }

    @Test func requestGetsTheResponderAnswerAndNoRespondersIsTyped() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        let responder = try NATSConnection(servers: [server.url])
        let requester = try NATSConnection(servers: [server.url])
        try await responder.connect()
        try await requester.connect()
        let service = try responder.subscribe("math.double")
        try await responder.flush()
        let serving = Task {
            for await message in service {
                let value = Int(message.string) ?? 0
                try responder.publish(message.replyTo ?? "", payload: Array(String(value * 2).utf8))
            }
        }
        async let first = requester.request("math.double", payload: Array("21".utf8))
        async let second = requester.request("math.double", payload: Array("50".utf8))
        let answers = try await [first.string, second.string]
        #expect(answers == ["42", "100"])

        await #expect(throws: NATSError.self) { try await requester.request("nobody.listens", timeout: .seconds(60)) }
        do {
            _ = try await requester.request("nobody.listens", timeout: .seconds(60))
        } catch let error as NATSError {
            #expect(error.kind == .noResponders)
        }
        service.unsubscribe()
        _ = await serving.result
        await requester.close()
        await responder.close()
        await server.stop()
    }

    @Test func serverErrorForABadSubjectIsReportedAndTheConnectionStays() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        let connection = try NATSConnection(servers: [server.url])
        try await connection.connect()
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .connected(server: "127.0.0.1:\(server.port)"))
        _ = try connection.subscribe("foo..bar")
        var serverError: String?
        while let event = await events.next() {
            if case .serverError(let text) = event { serverError = text; break }
        }
        #expect(serverError?.lowercased().contains("invalid subject") == true)
        try await connection.flush()
        #expect(connection.isConnected)
        #expect(throws: NATSError.self) { try connection.publish("has space", payload: []) }
        await connection.close()
        await server.stop()
    }

    @Test func unreachableServersGiveAClearError() async throws {
        let port = try NATSServerProcess.freePort()
        let connection = try NATSConnection(servers: ["nats://127.0.0.1:\(port)"])
        do {
            try await connection.connect()
            Issue.record("connect succeeded with no server")
        } catch let error as NATSError {
            #expect(error.kind == .connectionFailed)
            #expect(error.message.contains("127.0.0.1:\(port)"))
        }
        #expect(throws: NATSError.self) { try NATSConnection(servers: ["http://x:1"]) }
        #expect(throws: NATSError.self) { try NATSConnection(servers: []) }
    }
}
