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

enum ClusterTestSettings {
    /// Settings for `node` on `servers` with short timings.
    static func make(_ servers: [String], node: String, replicas: Int = 1, leaseTTL: Duration = .seconds(2),
                     ackWait: Duration = .seconds(2), stream: String = "HERALD") -> ClusterSettings {
        ClusterSettings(servers: servers.compactMap(URL.init(string:)), node: node, stream: stream, replicas: replicas, leaseTTL: leaseTTL,
                        ackWait: ackWait)
    }
}
