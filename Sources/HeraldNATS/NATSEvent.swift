/// What happens to a connection, as ``NATSConnection/events`` reports it: the bridge turns these
/// into bus events, so nothing the client drops is silent.
public enum NATSEvent: Sendable, Hashable {
    /// The first connection is up (after `CONNECT` and its `PONG`).
    case connected(server: String)
    /// The connection was lost; the client reconnects unless it was closed. `reason` says why
    /// (end of stream, a reset, a protocol error, a stale connection).
    case disconnected(server: String, reason: String)
    /// A later connection is up and every active subscription is sent again.
    case reconnected(server: String)
    /// A connection attempt failed (the client goes on to the next server after its backoff).
    case connectFailed(server: String, reason: String)
    /// Publishes were dropped: the buffer kept while disconnected was full. Each publish counts
    /// once across all these events.
    case dropped(messages: Int, bytes: Int)
    /// A subscription's buffer was full, so messages for it were dropped (a slow consumer).
    case slowConsumer(subject: String, dropped: Int)
    /// The server answered `-ERR` with this text (for example `Invalid Subject`); fatal ones also
    /// drop the connection, which `disconnected` then reports.
    case serverError(String)
    /// The server said it is shutting down (lame duck mode).
    case lameDuck(server: String)
    /// The server named other servers of its cluster; they are added to the reconnect list.
    case discoveredServers([String])
    /// The connection is closed for good: by ``NATSConnection/close()``, or after the last
    /// reconnect attempt. The stream ends after it.
    case closed(reason: String)
}
