import Herald

/// Published on `status.events.dropped` when a client of the status endpoint's `/events` did
/// not read fast enough: its buffer would have gone over its bound, so the client was
/// disconnected (it may reconnect) instead of slowing the bus or the other clients.
public struct StatusStreamDropped: Event, Hashable {
    /// `status.events.dropped`.
    public static let topic: Topic = "status.events.dropped"
    /// ``topic``.
    public var topic: Topic { Self.topic }

    /// The client's number, in order of connection since start.
    public var client: Int
    /// Its `?topic=` filters (empty: every topic).
    public var filters: [String]
    /// The bytes waiting for it when it was dropped.
    public var bufferedBytes: Int
    /// Its bound.
    public var limit: Int

    /// A report of one dropped client.
    public init(client: Int, filters: [String], bufferedBytes: Int, limit: Int) {
        self.client = client
        self.filters = filters
        self.bufferedBytes = bufferedBytes
        self.limit = limit
    }
}
