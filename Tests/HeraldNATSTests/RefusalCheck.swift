import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// What the credential and TLS tests share: a client for one server that does not reconnect,
/// and a connection attempt that must be refused saying why.
enum RefusalCheck {
    static func options(_ server: NATSServerProcess, name: String) -> NATSConnectionOptions {
        var options = NATSConnectionOptions(servers: ["nats://127.0.0.1:\(server.port)"], name: name)
        options.allowReconnect = false
        return options
    }

    static func expectRefusal(_ options: NATSConnectionOptions, saying text: String) async throws {
        let connection = try NATSConnection(options: options)
        do {
            try await connection.connect()
            Issue.record("connected")
        } catch {
            #expect("\(error)".contains(text), "\(error)")
        }
        await connection.close()
    }
}
