import Foundation
import Herald
import HeraldHTTP
import HeraldSubscribers
import HeraldSync

/// `GET /events`: the bus as Server-Sent Events, one message per event (`id:` its sequence
/// number, `data:` the archive's JSON object for it), filtered by repeatable `?topic=PATTERN`.
///
/// One queued bus subscription (its own bounded mailbox, dropping the oldest when full, so the
/// bus never waits for it) encodes each event once, with the archive's ``EnvelopeLineEncoder``,
/// and appends it to every matching client's buffer; nothing is encoded while no client listens.
/// Each client is written by its connection's own thread (see ``HTTPResponseStream``), woken by
/// a notifier. A client whose buffer would pass ``clientBuffer`` bytes is disconnected and
/// reported on the bus as ``StatusStreamDropped``: a client that does not read never slows the
/// bus or the other clients, and never makes the daemon hold more than the bound for it.
public final class EventStreamHub: Sendable {
    /// The default bound of bytes waiting for one client: 256 KiB.
    public static let defaultClientBuffer = 256 * 1024
    /// How often an idle stream gets a comment, so a proxy or a browser sees it alive.
    static let keepAlive: Duration = .seconds(15)

    private final class Client: Sendable {
        let id: Int
        let patterns: [TopicPattern]
        let notifier: HTTPStreamNotifier
        /// Bytes not written yet; nil once the client is dropped.
        let pending = SyncLock<[UInt8]?>([])
        let connection = SyncLock<HTTPStreamConnection?>(nil)

        init(id: Int, patterns: [TopicPattern], notifier: HTTPStreamNotifier) {
            self.id = id
            self.patterns = patterns
            self.notifier = notifier
        }

        func accepts(_ topic: Topic) -> Bool {
            patterns.isEmpty || patterns.contains { $0.matches(topic) }
        }
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextClient = 0
        var dropped = 0
        var subscription: Subscription?
    }

    /// The bound of bytes waiting for one client.
    public let clientBuffer: Int
    private let bus: EventBus
    private let state = SyncLock(State())
    private let encoder = SyncLock(EnvelopeLineEncoder())

    /// A hub for `bus`; nothing is subscribed before ``start()``.
    public init(bus: EventBus, clientBuffer: Int = EventStreamHub.defaultClientBuffer) {
        self.bus = bus
        self.clientBuffer = max(1024, clientBuffer)
    }

    /// Clients connected now, and dropped since start.
    public var counts: StatusReport.Streams {
        let (clients, dropped) = state.withLock { (Array($0.clients.values), $0.dropped) }
        let buffered = clients.reduce(0) { total, client in total + client.pending.withLock { $0?.count ?? 0 } }
        return StatusReport.Streams(clients: clients.count, dropped: dropped, bufferedBytes: buffered)
    }

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
                state.clients = [:]
            }
            return (state.subscription, Array(state.clients.values))
        }
        subscription?.cancel()
        for client in clients { drop(client, slow: false) }
    }

    // MARK: Fan-out (on the subscription's task: no I/O, no waiting)

    private func fanOut(_ envelope: Envelope<any Event>) {
        let clients = state.withLock { state in state.clients.values.filter { $0.accepts(envelope.topic) } }
        guard !clients.isEmpty, let message = message(for: envelope) else { return }
        var overflowing: [(Client, Int)] = []
        for client in clients {
            let outcome = client.pending.withLock { pending -> (wake: Bool, overflow: Int?) in
                guard let waiting = pending else { return (false, nil) }
                guard waiting.count + message.count <= clientBuffer else { return (false, waiting.count) }
                pending?.append(contentsOf: message)
                return (waiting.isEmpty, nil)
            }
            if let buffered = outcome.overflow { overflowing.append((client, buffered)) }
            if outcome.wake { client.notifier.notify() }
        }
        for (client, buffered) in overflowing {
            guard remove(client) else { continue }
            drop(client, slow: true)
            _ = try? bus.post(StatusStreamDropped(client: client.id, filters: client.patterns.map(\.pattern), bufferedBytes: buffered,
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
    /// published after the client sees the head reaches it.
    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        var patterns: [TopicPattern] = []
        for (name, value) in request.queryItems where name == "topic" {
            do {
                patterns.append(try TopicPattern(validating: value))
            } catch {
                return .error(400, "topic=\(value): \(error)")
            }
        }
        guard let notifier = try? HTTPStreamNotifier() else { return .error(503, "no descriptor left for another stream; retry later") }
        let client = state.withLock { state -> Client? in
            guard state.subscription != nil else { return nil }
            state.nextClient += 1
            let client = Client(id: state.nextClient, patterns: patterns, notifier: notifier)
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
        guard client.pending.withLock({ $0 != nil }), connection.write(Array(": herald events\nretry: 2000\n\n".utf8)) else { return }
        while true {
            switch connection.wait(for: client.notifier, timeout: Self.keepAlive) {
            case .closed:
                return
            case .timedOut:
                guard connection.write(Array(": keep-alive\n\n".utf8)) else { return }
            case .notified:
                guard let bytes = client.pending.withLock({ pending -> [UInt8]? in
                    defer { if pending != nil { pending = [] } }
                    return pending
                }) else { return }
                guard bytes.isEmpty || connection.write(bytes) else { return }
            }
        }
    }

    /// Takes the client out of the fan-out; false when it was already out.
    private func remove(_ client: Client) -> Bool {
        state.withLock { state in
            guard state.clients.removeValue(forKey: client.id) != nil else { return false }
            return true
        }
    }

    /// Marks the client dropped and shuts its connection, waking a write blocked on it; `slow`
    /// counts it as dropped for not reading.
    private func drop(_ client: Client, slow: Bool) {
        client.pending.withLock { $0 = nil }
        if slow { state.withLock { $0.dropped += 1 } }
        client.connection.withLock { $0 }?.close()
        client.notifier.notify()
    }
}
