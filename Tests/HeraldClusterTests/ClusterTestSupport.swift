import Foundation
import Herald
import HeraldCluster
import HeraldLifecycle
import HeraldSync
import HeraldTestSupport

/// An event the tests publish.
struct Signal: Event, Hashable {
    var topic: Topic
    var n: Int
}

/// Services running in a group of their own until ``stop()``.
final class RunningGroup: Sendable {
    private let task: Task<Result<Void, ServiceGroupError>, Never>

    /// Starts the members in order; returns once every one announced it started.
    init(_ members: [ServiceGroup.Member]) async {
        let (started, continuation) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(members, onEvent: { event in
            if event == .started { continuation.yield() }
            if case .stopping = event { continuation.finish() }
        })
        task = Task {
            do throws(ServiceGroupError) {
                try await group.run()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        for await _ in started { break }
    }

    /// Stops the members in reverse order (gracefully) and returns how the group ended.
    @discardableResult
    func stop() async -> Result<Void, ServiceGroupError> {
        task.cancel()
        return await task.value
    }
}

enum ClusterTestSettings {
    /// Settings for `node` on `servers` with short timings.
    static func make(_ servers: [String], node: String, replicas: Int = 1, leaseTTL: Duration = .seconds(2),
                     ackWait: Duration = .seconds(2), stream: String = "HERALD") -> ClusterSettings {
        ClusterSettings(servers: servers.compactMap(URL.init(string:)), node: node, stream: stream, replicas: replicas, leaseTTL: leaseTTL,
                        ackWait: ackWait)
    }
}
