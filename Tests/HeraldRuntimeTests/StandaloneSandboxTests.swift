import Foundation
import HeraldRuntime
import Testing

/// `herald sandbox` runs the sandbox as a group of one service: started once bound, stopped by
/// cancellation (or a signal), a port it cannot bind named as the failure.
@Suite struct StandaloneSandboxTests {
    @Test(.timeLimit(.minutes(5)))
    func itAnnouncesItsURLAndACancelledRunIsAStopInOrder() async throws {
        let (urls, announce) = AsyncStream.makeStream(of: StandaloneSandbox.Started.self)
        let (reasons, record) = AsyncStream.makeStream(of: String.self)
        let run = Task {
            try await StandaloneSandbox(configuration: nil, port: 0).run(started: { announce.yield($0) },
                                                                        stopping: { record.yield("\($0)") })
        }
        var announced = urls.makeAsyncIterator()
        let started = try #require(await announced.next())
        #expect(started.baseURL.absoluteString.hasPrefix("http://127.0.0.1:"))
        #expect(!started.baasTenant.isEmpty)

        // A second sandbox on the same port cannot start, and says so.
        let port = try #require(started.baseURL.port)
        await #expect(throws: DaemonError.self) {
            try await StandaloneSandbox(configuration: nil, port: port).run(started: { _ in Issue.record("it did not bind") })
        }

        run.cancel()
        try await run.value
        var said = reasons.makeAsyncIterator()
        #expect(await said.next() != nil, "the stop is reported with its reason")
    }
}
