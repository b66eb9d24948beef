import Foundation
import HeraldRuntime
import HeraldSubscribers
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

/// The daemon as a group of services: what it reports when it starts and stops, and a part
/// that fails named in its error.
@Suite struct DaemonLifecycleTests {
    struct Unopenable: Error, CustomStringConvertible {
        var description: String { "no room" }
    }

    /// Reasons the daemon gave for stopping.
    final class Reasons: Sendable {
        private let storage = SyncLock<[DaemonStopping]>([])
        func record(_ reason: DaemonStopping) { storage.withLock { $0.append(reason) } }
        var all: [DaemonStopping] { storage.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(5)))
    func aPartThatCannotStartIsNamedAndNoLoaderRuns() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-lifecycle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let reasons = Reasons()
        let daemon = HeraldDaemon(configuration: try DaemonTests.demo(state: state), makeWriter: { _ in throw Unopenable() },
                                  clock: ManualClock(), now: DaemonTests.fixedNow)
        let error = await #expect(throws: DaemonError.self) {
            try await daemon.run(started: { _ in Issue.record("nothing should be reported as running") },
                                 stopping: { reasons.record($0) })
        }
        #expect(error?.message.hasPrefix("subscribers.console.output: cannot open: ") == true, "\(String(describing: error))")
        #expect(reasons.all == [.failed("subscribers.console")])
        // No loader started, so none saved a state.
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("home.json").path))
    }

    @Test(.timeLimit(.minutes(5)))
    func startedComesBeforeAnyLoadAndTheDurationStopsTheRun() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-lifecycle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let writer = WatchedWriter(), reasons = Reasons()
        let clock = ManualClock()
        let daemon = HeraldDaemon(configuration: try DaemonTests.demo(state: state), makeWriter: { _ in writer }, drainTimeout: DaemonTests.drainTimeout,
                                  clock: clock, now: DaemonTests.fixedNow)
        let run = Task {
            try await daemon.run(for: .seconds(10), started: { started in
                writer.record(["started: \(started.loaders.joined(separator: ",")) at \(started.sandboxURL != nil)"])
            }, stopping: { reasons.record($0) })
        }
        await writer.wait { lines in ["home", "itmedia", "images", "todos"].allSatisfy { id in lines.contains { $0.contains("loader.\(id).finished") } } }
        // Four schedules and the run's timer.
        await clock.waitForSleepers(5)
        clock.advance(by: .seconds(10))
        let stopped = try await run.value

        #expect(writer.lines.first == "started: home,images,itmedia,todos at true")
        #expect(reasons.all == [.timeElapsed])
        #expect(stopped.drained)
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingTheRunIsAStopInOrderNotAnError() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-lifecycle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let writer = WatchedWriter(), reasons = Reasons()
        let daemon = HeraldDaemon(configuration: try DaemonTests.demo(state: state), makeWriter: { _ in writer }, drainTimeout: DaemonTests.drainTimeout,
                                  clock: ManualClock(), now: DaemonTests.fixedNow)
        let run = Task { try await daemon.run(stopping: { reasons.record($0) }) }
        await writer.wait { $0.contains { $0.contains("loader.home.finished") } }
        run.cancel()
        let stopped = try await run.value
        #expect(reasons.all == [.cancelled])
        #expect(stopped.drained)
    }
}
