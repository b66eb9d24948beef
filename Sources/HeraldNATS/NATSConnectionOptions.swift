import HeraldIO

/// How a ``NATSConnection`` connects, reconnects and buffers. A value type, `Sendable`.
public struct NATSConnectionOptions: Sendable {
    /// The servers to try, in order (`nats://host:port`, `host:port` or `host`). Servers the
    /// cluster announces in `INFO` are added after them unless ``ignoreDiscoveredServers``.
    public var servers: [String]
    /// The client name the server shows in its monitoring (`CONNECT`'s `name`).
    public var name: String?
    /// A token for servers that require one (a token in an address takes precedence).
    public var token: String?
    /// A user and password for servers that require them (credentials in an address take precedence).
    public var user: String?
    /// The password that goes with ``user``.
    public var password: String?
    /// An NKey for servers that know their users by public key (`authorization { users = [{nkey: U…}] }`):
    /// the client signs the nonce of the server's `INFO` with it.
    public var nkey: NATSNKeyPair?
    /// A user's JWT and seed (a `.creds` file) for servers in operator mode: the JWT goes in
    /// `CONNECT` and the seed signs the server's nonce. Takes precedence over ``nkey``.
    public var userCredentials: NATSUserCredentials?
    /// TLS for every server: its certificate checked against these roots (the system's by
    /// default), a client certificate for servers that verify clients. nil: TLS only where an
    /// address is `tls://` or the server requires it (then checked against the system's roots).
    public var tls: TLSConfiguration?
    /// How long one TCP connect plus handshake (INFO, CONNECT, PING/PONG) may take.
    public var connectTimeout: Duration = .seconds(5)
    /// Whether to reconnect after a connection drops (to the next server of the list).
    public var allowReconnect = true
    /// How many reconnect attempts in a row may fail before the client closes; nil: no limit.
    public var maxReconnectAttempts: Int? = nil
    /// Whether ``NATSConnection/connect()`` keeps trying (with the reconnect backoff) when no server
    /// answers at first, rather than throwing after one pass over the list.
    public var retryOnFailedConnect = false
    /// The wait before reconnect attempt `n` (1, 2, ...; reset once a connection proved healthy:
    /// it answered a PING sent after the handshake and stayed up for ``healthyUptime``).
    /// The default doubles from 50 ms to 2 s. Injected so tests can make it short.
    public var reconnectDelay: @Sendable (_ attempt: Int) -> Duration = { attempt in
        .milliseconds(min(2000, 50 << min(attempt - 1, 6)))
    }
    /// How long a connection that answered its health PING must stay up before a drop no longer
    /// counts as a failed attempt: a server is then reconnected to at once, at most once per
    /// this, however it misbehaves after the handshake.
    public var healthyUptime: Duration = .seconds(2)
    /// How many bytes of publishes are kept while disconnected; what does not fit is refused
    /// (``NATSError/Kind/bufferFull``) and counted in a ``NATSEvent/dropped(messages:bytes:)``.
    public var reconnectBufferBytes = 8 * 1024 * 1024
    /// How many publishes are kept while disconnected (the same rules as ``reconnectBufferBytes``).
    public var reconnectBufferMessages = 65_536
    /// How often the client pings an idle server to find a dead connection.
    public var pingInterval: Duration = .seconds(120)
    /// How many pings may go unanswered before the connection counts as stale and is dropped.
    public var maxPingsOutstanding = 2
    /// How many messages a subscription buffers for a slow consumer before dropping (reported as
    /// ``NATSEvent/slowConsumer(subject:dropped:)``).
    public var subscriptionBufferLimit = 65_536
    /// The longest control line accepted from the server (`INFO` JSON included).
    public var maxControlLine = 64 * 1024
    /// The largest message (headers and body) the client takes from the server or publishes:
    /// the smaller of this and the server's `max_payload` counts, so a server that announces
    /// gigabytes cannot make the client buffer them. A larger incoming message of at most
    /// 64 MiB is read and dropped as it comes and delivered without its bytes
    /// (``NATSMessage/oversize``), so a JetStream message stored under a larger limit does not
    /// cost the connection at each delivery; a larger one still is a protocol error (the
    /// connection is dropped and made again, with backoff). A larger publish is refused
    /// (``NATSError/Kind/payloadTooLarge``). 8 MiB by default.
    public var maxPayload = 8 * 1024 * 1024
    /// Whether to leave out the servers the cluster announces.
    public var ignoreDiscoveredServers = false
    /// The timeout of ``NATSConnection/request(_:payload:headers:timeout:)`` when none is given.
    public var requestTimeout: Duration = .seconds(5)

    /// Options for the given servers; every other option has its default.
    public init(servers: [String], name: String? = nil) {
        self.servers = servers
        self.name = name
    }
}
