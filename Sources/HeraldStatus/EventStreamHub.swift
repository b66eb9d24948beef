import Foundation
import Herald
import HeraldHTTP
import HeraldSubscribers
import HeraldSync
import Synchronization

/// `GET /events`: the bus as Server-Sent Events, one message per event (`id:` its sequence
/// number, `data:` the archive's JSON object for it), filtered by repeatable `?topic=PATTERN`
/// (at most ``maxPatternsPerClient``).
///
/// One queued bus subscription (its own bounded mailbox, dropping the oldest when full, so the
/// bus never waits for it) encodes each event once, with the archive's ``EnvelopeLineEncoder``,
/// and appends it to every matching client's buffer; nothing is encoded while no client listens.
/// The clients are found through a ``TopicPatternIndex`` of all their patterns (the bus's own
/// trie), so patterns of other topics cost an event nothing. Each client is written by its
/// connection's own thread (see ``HTTPResponseStream``), woken by a notifier. A client whose
/// bytes (the buffer being written and the one filling, together) would pass ``clientBuffer`` is
/// disconnected and reported on the bus as ``StatusStreamDropped``: a client that does not read
/// never slows the bus or the other clients, and never makes the daemon hold more than the bound
/// for it.
public final class EventStreamHub: Sendable {
    /// The default bound of bytes held for one client: 256 KiB.
    public static let defaultClientBuffer = 256 * 1024
    /// The most `?topic=` patterns one client may name.
    public static let maxPatternsPerClient = 32
    /// How often an idle stream gets a comment, so a proxy or a browser sees it alive.
    static let keepAlive: Duration = .seconds(15)

    private final class Client: Sendable {
        let id: Int
        /// Its patterns, without repeats; empty: every topic.
        let patterns: [TopicPattern]
        let notifier: HTTPStreamNotifier
        let buffer: SyncLock<StreamClientBuffer>
        let connection = SyncLock<HTTPStreamConnection?>(nil)

        init(id: Int, patterns: [TopicPattern], notifier: HTTPStreamNotifier, bound: Int) {
            self.id = id
            self.patterns = patterns
            self.notifier = notifier
            self.buffer = SyncLock(StreamClientBuffer(bound: bound))
        }

        /// The patterns it is filed under in the index.
        var filed: [TopicPattern] { patterns.isEmpty ? [.all] : patterns }
    }

    private struct State {
        var clients: [Int: Client] = [:]
        /// Every client, under each of its patterns.
        let index = TopicPatternIndex<Client>()
        var nextClient = 0
        var dropped = 0
        var subscription: Subscription?
        /// Trie nodes visited to find the clients of events, since start.
        var routingSteps = 0
    }

    /// The bound of bytes held for one client.
    public let clientBuffer: Int
    private let bus: EventBus
    private let state = SyncLock(State())
    private let encoder = SyncLock(EnvelopeLineEncoder())
    /// The most bytes one client held at once, since start (written by the fan-out only).
    private let peakClientBytes = Atomic<Int>(0)

    /// A hub for `bus`; nothing is subscribed before ``start()``.
    public init(bus: EventBus, clientBuffer: Int = EventStreamHub.defaultClientBuffer) {
        self.bus = bus
        self.clientBuffer = max(1024, clientBuffer)
    }

    /// Clients connected now, dropped since start, and the bytes held for them.
    public var counts: StatusReport.Streams {
        let (clients, dropped) = state.withLock { (Array($0.clients.values), $0.dropped) }
        let held = clients.map { client in client.buffer.withLock { $0.held } }
        return StatusReport.Streams(clients: clients.count, dropped: dropped, bufferedBytes: held.reduce(0, +),
                                    largestClientBytes: held.max() ?? 0, peakClientBytes: peakClientBytes.load(ordering: .relaxed),
                                    clientBufferLimit: clientBuffer)
    }

    /// Trie nodes visited to find the clients of events, since start: the routing's work, which
    /// does not grow with patterns of other topics (tests compare it).
    var routingSteps: Int { state.withLock { $0.routingSteps } }

    /// Subscribes to every topic of the bus.
    ///
    /// - Throws: `EventBusError` when the bus refuses (it is shut down).
    public func start() throws {
        let subscription = try bus.subscribe(matching: .all, name: "status.events", delivery: .queued(capacity: 4096, overflow: .dropOldest)) {
            [weak self] envelope in self?.fanOut(envelope)
        }
        state.withLock { $0.subscription = subscription }
    }

    /// Ends the subscription and closes every client's stream.
    public func stop() {
        let (subscription, clients) = state.withLock { state in
            defer {
                state.subscription = nil
                for client in state.clients.values { Self.unfile(client, from: state.index) }
                state.clients = [:]
            }
            return (state.subscription, Array(state.clients.values))
        }
        subscription?.cancel()
        for client in clients { drop(client, slow: false) }
    }

    // MARK: Fan-out (on the subscription's task: no I/O, no waiting)

    private func fanOut(_ envelope: Envelope<any Event>) {
        let clients = state.withLock { state -> [Client] in
            var matched: [Client] = []
            state.routingSteps += state.index.match(envelope.topic, into: &matched)
            return matched
        }
        guard !clients.isEmpty, let message = message(for: envelope) else { return }
        var seen = Set<Int>()
        var overflowing: [(Client, Int)] = []
        var peak = 0
        // A client filed under two matching patterns gets the event once.
        for client in clients where seen.insert(client.id).inserted {
            switch client.buffer.withLock({ $0.append(message) }) {
            case .appended(let wake, let held):
                peak = max(peak, held)
                if wake { client.notifier.notify() }
            case .overflow(let held):
                overflowing.append((client, held))
            case .closed:
                break
            }
        }
        if peak > peakClientBytes.load(ordering: .relaxed) { peakClientBytes.store(peak, ordering: .relaxed) }
        for (client, held) in overflowing {
            guard remove(client) else { continue }
            drop(client, slow: true)
            _ = try? bus.post(StatusStreamDropped(client: client.id, filters: client.patterns.map(\.pattern), bufferedBytes: held,
                                                  limit: clientBuffer), from: Sender("status"))
        }
    }

    /// `id: <seq>\ndata: <the archive's JSON>\n\n`; nil when the event cannot be encoded.
    private func message(for envelope: Envelope<any Event>) -> [UInt8]? {
        guard var line = try? encoder.withLock({ try $0.line(for: envelope) }) else { return nil }
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        return Array("id: \(envelope.sequence)\ndata: ".utf8) + line + Array("\n\n".utf8)
    }

    // MARK: Clients (on their connection threads)

    /// The stream for one `GET /events`, registered before it is answered, so every event
    /// published after the client sees the head reaches it. More than ``maxPatternsPerClient``
    /// patterns, or an invalid one, is `400`.
    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let values = request.queryItems.filter { $0.0 == "topic" }.map(\.1)
        guard values.count <= Self.maxPatternsPerClient else {
            return .error(400, "\(values.count) topic patterns; at most \(Self.maxPatternsPerClient) per client")
        }
        var patterns: [TopicPattern] = []
        for value in values {
            let pattern: TopicPattern
            do {
                pattern = try TopicPattern(validating: value)
            } catch {
                return .error(400, "topic=\(value): \(error)")
            }
            if !patterns.contains(pattern) { patterns.append(pattern) }
        }
        guard let notifier = try? HTTPStreamNotifier() else { return .error(503, "no descriptor left for another stream; retry later") }
        let client = state.withLock { state -> Client? in
            guard state.subscription != nil else { return nil }
            state.nextClient += 1
            let client = Client(id: state.nextClient, patterns: patterns, notifier: notifier, bound: clientBuffer)
            for pattern in client.filed { try? state.index.insert(client, for: pattern) }
            state.clients[client.id] = client
            return client
        }
        guard let client else { return .error(503, "the event stream is stopping") }
        let headers: [(name: String, value: String)] = [("Content-Type", "text/event-stream; charset=utf-8"), ("X-Accel-Buffering", "no")]
        return .streaming(headers: headers, HTTPResponseStream({ [self] connection in
            serve(client, on: connection)
        }, abandoned: { [self] in
            _ = remove(client)
        }))
    }

    private func serve(_ client: Client, on connection: HTTPStreamConnection) {
        client.connection.withLock { $0 = connection }
        defer {
            _ = remove(client)
            client.connection.withLock { $0 = nil }
        }
        // A comment first: the client knows it is subscribed (and a browser that the stream is open).
        guard !client.buffer.withLock({ $0.isClosed }), connection.write(Array(": herald events\nretry: 2000\n\n".utf8)) else { return }
        while true {
            switch connection.wait(for: client.notifier, timeout: Self.keepAlive) {
            case .closed:
                return
            case .timedOut:
                guard connection.write(Array(": keep-alive\n\n".utf8)) else { return }
            case .notified:
                guard writeWaiting(client, to: connection) else { return }
            }
        }
    }

    /// Takes what waits for `client` and writes it chunk by chunk (blocking this, the
    /// connection's, thread while the client's socket is full), giving each chunk back once
    /// written; false when the client is dropped or gone.
    private func writeWaiting(_ client: Client, to connection: HTTPStreamConnection) -> Bool {
        guard var chunks = client.buffer.withLock({ $0.take() }) else { return false }
        defer { client.buffer.withLock { $0.writerDone() } }
        chunks.reverse()
        while !chunks.isEmpty {
            // The chunk is released at the end of this statement: only then does it stop counting.
            let sent = connection.write(chunks.removeLast())
            client.buffer.withLock { $0.chunkWritten() }
            guard sent else {
                chunks = []
                return false
            }
        }
        return true
    }

    /// Takes the client out of the fan-out; false when it was already out.
    private func remove(_ client: Client) -> Bool {
        state.withLock { state in
            guard state.clients.removeValue(forKey: client.id) != nil else { return false }
            Self.unfile(client, from: state.index)
            return true
        }
    }

    private static func unfile(_ client: Client, from index: TopicPatternIndex<Client>) {
        for pattern in client.filed { index.remove(for: pattern) { $0 === client } }
    }

    /// Marks the client dropped and shuts its connection, waking a write blocked on it; `slow`
    /// counts it as dropped for not reading.
    private func drop(_ client: Client, slow: Bool) {
        client.buffer.withLock { $0.close() }
        if slow { state.withLock { $0.dropped += 1 } }
        client.connection.withLock { $0 }?.close()
        client.notifier.notify()
    }
}
