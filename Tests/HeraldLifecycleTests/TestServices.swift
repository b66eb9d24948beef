@testable import HeraldLifecycle
import HeraldTesting

struct Failure: Error, Equatable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Records `start <name>` when it runs and `stop <name>` when it ends, after a graceful
/// shutdown or a cancellation; announces itself once `ready` opens (at once by default).
struct RecordingService: Service {
    let name: String
    let log: Recording<String>
    var ready: Gate? = nil

    func run() async throws {
        log.append("start \(name)")
        if let ready { try await ready.wait() }
        log.append("ready \(name)")
        announceStarted()
        try? await gracefulShutdown()
        log.append("stop \(name)\(Task.isCancelled ? " (cancelled)" : "")")
    }
}

/// Throws `message` once started (after the group started, with `afterGroupStarted`), or before
/// announcing itself.
struct FailingService: Service {
    let name: String
    let log: Recording<String>
    var announces = true

    func run() async throws {
        log.append("start \(name)")
        if announces {
            announceStarted()
            try await waitUntilGroupStarted()
        }
        throw Failure(message: "\(name) broke")
    }
}
