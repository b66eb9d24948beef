/// Everything a connection's callers and its I/O thread share, behind one lock.
struct CoreState {
    /// The phase, its waiters and the reconnect decisions.
    var machine: ConnectionMachine
    /// Frames for the I/O thread to write, appended whole by callers.
    var outbound: [UInt8] = []
    /// Publishes in ``outbound`` while not connected (the reconnect buffer's message count).
    var bufferedMessages = 0
    /// Whether a byte is on its way through the wake pipe (so callers write one per wake-up).
    var wakePending = false
    var subscriptions: [UInt64: SubscriptionRecord] = [:]
    var nextSID: UInt64 = 1
    var replies: [String: ReplyRoute] = [:]
    var deadlines = DeadlineHeap()
    var nextToken: UInt64 = 0
    var inboxSID: UInt64?
    var info: NATSServerInfo?
    var servers: [NATSServerAddress]
    var currentServer: String?
    var maxPayload = 1024 * 1024
    /// Publishes dropped since the last ``NATSEvent/dropped(messages:bytes:)``.
    var unreportedDrops = (messages: 0, bytes: 0)
    /// Whether this outage already reported its first drop (the rest are summed up at reconnect).
    var reportedDropThisOutage = false
    var statistics = NATSConnectionStatistics()

    init(servers: [NATSServerAddress], policy: ConnectionMachine.Policy) {
        self.servers = servers
        machine = ConnectionMachine(policy: policy)
    }

    var phase: ConnectionMachine.Phase { machine.phase }
    var isAcceptingWork: Bool { machine.isAcceptingWork }
}

/// One subscription as the connection keeps it.
struct SubscriptionRecord {
    var subject: String
    var queue: String?
    var continuation: AsyncStream<NATSMessage>.Continuation?
    /// Unsubscribe after this many deliveries in total (`UNSUB sid max`).
    var max: Int?
    var delivered = 0
    /// The request inbox: its messages go to ``CoreState/replies`` by the token of their subject.
    var isInbox = false
    /// A pull request's own subscription: its messages (whose subjects are the stream's) go to
    /// the route of this token.
    var routeToken: String?
    /// Messages dropped for a full buffer and not reported yet.
    var unreportedDrops = 0
    var reportedDropping = false
}

/// Where a reply to one token goes. Called on the I/O thread, so handlers only hand the message
/// over (resume a continuation, complete a future). A class: it moves between the routing
/// table, a delivery and the expiry list for every acked publish, as one reference.
final class ReplyRoute: Sendable {
    /// The subject the request went to (for errors).
    let subject: String
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    /// Removed at the first message (a request, a publish ack); otherwise ``onMessage`` says
    /// when it is done (a fetch of many messages).
    let oneShot: Bool
    /// Gets each message; returns true when the route is done.
    let onMessage: @Sendable (NATSMessage) -> Bool
    /// Gets the reason the route ended without a (last) message: a timeout, close, cancellation.
    let onEnd: @Sendable (NATSError) -> Void
    /// The route's own subscription, ended with it.
    let sid: UInt64?

    init(subject: String, timeout: Duration, deadline: ContinuousClock.Instant, oneShot: Bool,
         onMessage: @escaping @Sendable (NATSMessage) -> Bool, onEnd: @escaping @Sendable (NATSError) -> Void, sid: UInt64? = nil) {
        self.subject = subject
        self.timeout = timeout
        self.deadline = deadline
        self.oneShot = oneShot
        self.onMessage = onMessage
        self.onEnd = onEnd
        self.sid = sid
    }
}

/// Counters of a connection, for status pages and tests.
public struct NATSConnectionStatistics: Sendable, Hashable {
    /// Messages published (accepted into the write buffer).
    public var messagesOut = 0
    /// Bytes of payload published.
    public var bytesOut = 0
    /// Messages received from the server.
    public var messagesIn = 0
    /// Bytes of payload received.
    public var bytesIn = 0
    /// Successful reconnects.
    public var reconnects = 0
    /// Publishes dropped because the reconnect buffer was full.
    public var droppedPublishes = 0
    /// Messages dropped because a subscription's buffer was full.
    public var droppedMessages = 0
}

/// A min-heap of reply deadlines. Entries of routes that ended early stay until their time
/// comes (checked against the route's own deadline then), which keeps removal O(log n).
struct DeadlineHeap {
    private var entries: [(deadline: ContinuousClock.Instant, token: String)] = []

    var earliest: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func insert(_ deadline: ContinuousClock.Instant, _ token: String) {
        entries.append((deadline, token))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(_ now: ContinuousClock.Instant) -> String? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = parent * 2 + 1, right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.token
    }

    mutating func removeAll() { entries.removeAll() }
}
