import Foundation
import HeraldNATS
import HeraldTestSupport
import Testing

/// Cancelling the task that waits in ``NATSConnection/connect()`` ends the attempt at once.
@Suite(.timeLimit(.minutes(5)))
struct ConnectCancellationTests {
    /// Before: the attempt ran for its whole connect timeout (an hour here).
    @Test func cancellingConnectToAServerThatNeverAnswersEndsItAtOnce() async throws {
        let server = try FakeNATSServer(greeting: .silent) { session in session.readToEnd() }
        defer { server.stop() }
        var options = NATSConnectionOptions(servers: [server.url], name: "cancelled")
        options.connectTimeout = .seconds(3600)
        let connection = try NATSConnection(options: options)
        let attempt = Task { try await connection.connect() }
        await server.waitForConnections(1)
        attempt.cancel()
        let error = await #expect(throws: NATSError.self) { try await attempt.value }
        #expect(error?.kind == .cancelled)
        #expect(!connection.isConnected)
    }
}
