import Foundation
import Herald
import HeraldServices

/// An event another node (or a program that is not a Herald node) published to the cluster's
/// stream, as it arrives on this node's bus: on its original topic, from its original sender,
/// in its original correlation chain, marked with the node it came from.
///
/// Subscribe to its topic (`loader.home.finished`) to see the events of every node; test
/// `envelope.event is RemoteEvent` (or read ``node``) to tell them from this node's own. A
/// remote event is never exported again, so nothing loops.
public struct RemoteEvent: Event, Hashable {
    /// Where the event was published first, as its envelope said.
    public struct Origin: Sendable, Hashable, Codable {
        /// Its id on the node that published it (`<bus uuid>:<sequence>`).
        public var id: String?
        /// Its sequence number there.
        public var seq: UInt64?
        /// When it was published there.
        public var time: Date?

        /// An origin.
        public init(id: String? = nil, seq: UInt64? = nil, time: Date? = nil) {
            self.id = id
            self.seq = seq
            self.time = time
        }
    }

    /// The topic it was published on.
    public var topic: Topic
    /// The node that published it (``ClusterSettings/externalNode`` for other programs).
    public var node: String
    /// Its envelope on that node.
    public var origin: Origin
    /// The event itself, as that node's archive writes it.
    public var event: JSONValue

    /// A remote event.
    public init(topic: Topic, node: String, origin: Origin = Origin(), event: JSONValue) {
        self.topic = topic
        self.node = node
        self.origin = origin
        self.event = event
    }
}
