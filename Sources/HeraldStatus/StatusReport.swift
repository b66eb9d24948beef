import Foundation

/// Everything the status endpoint knows at one moment: what `/status` answers (as JSON, dates
/// in ISO 8601), what `/metrics` renders and what `herald status` prints. `Codable`, so a
/// client decodes what the endpoint encoded.
public struct StatusReport: Sendable, Hashable, Codable {
    /// When it was taken.
    public var time: Date
    /// Whether every service of the daemon has started (what `/readyz` says).
    public var ready: Bool
    /// The bus's counters.
    public var bus: Bus
    /// The loaders, by id.
    public var loaders: [Loader]
    /// The file subscribers (archives), by name.
    public var archives: [Archive]
    /// The post schedulers, by name.
    public var posts: [Poster]
    /// The `/events` stream's clients.
    public var streams: Streams
    /// The process (nil where `/proc` is missing).
    public var process: ProcessStatistics?
    /// The configuration running and its reloads (nil from an endpoint that does not say).
    public var config: StatusConfig? = nil

    /// The bus's counters, from `EventBus.stats()`.
    public struct Bus: Sendable, Hashable, Codable {
        /// Events published on this bus.
        public var published: UInt64
        /// Per topic, by topic.
        public var topics: [Topic]
        /// Per live subscription, in subscription order.
        public var subscriptions: [Subscription]
    }

    /// One topic's counters.
    public struct Topic: Sendable, Hashable, Codable {
        /// The topic.
        public var topic: String
        /// Events published on it.
        public var published: UInt64
        /// Deliveries of its events completed.
        public var delivered: Int
        /// Its events dropped by overflowing mailboxes.
        public var dropped: Int
        /// Handler calls on its events that threw.
        public var failed: Int
    }

    /// One subscription's counters.
    public struct Subscription: Sendable, Hashable, Codable {
        /// Its id (names may repeat, ids do not).
        public var id: UInt64
        /// Its name.
        public var name: String
        /// Its topic pattern, nil for a subscription by type.
        public var pattern: String?
        /// How it receives events (`inline`, `queued(capacity: …, overflow: …)`).
        public var delivery: String
        /// Events its handler or stream received.
        public var delivered: Int
        /// Events its mailbox dropped.
        public var dropped: Int
        /// Handler calls that threw.
        public var failed: Int
        /// Events discarded undelivered.
        public var discarded: Int
        /// Events waiting in its mailbox.
        public var queueDepth: Int
        /// The most events that ever waited.
        public var highWaterMark: Int
    }

    /// One loader's schedule.
    public struct Loader: Sendable, Hashable, Codable {
        /// Its id.
        public var id: String
        /// `timeline`, `tiqav` or `todo`.
        public var kind: String
        /// `starting`, `loading`, `waiting` or `stopped`.
        public var state: String
        /// Loads finished, successful or not.
        public var pulls: Int
        /// Failed loads by kind (`transport`, `httpStatus`, `rateLimited`, …).
        public var failures: [String: Int]
        /// Items announced as new, over every load.
        public var newItems: Int
        /// When the last load began.
        public var lastRun: Date?
        /// How it ended: `finished` or `failed`.
        public var lastResult: String?
        /// What the last load said: `20 items, 3 new`, or the failure.
        public var lastMessage: String?
        /// When the last successful load ended.
        public var lastSuccess: Date?
        /// When the next load is due.
        public var nextRun: Date?
        /// Failures in a row.
        public var consecutiveFailures: Int
    }

    /// One archive (file subscriber).
    public struct Archive: Sendable, Hashable, Codable {
        /// The subscriber's name.
        public var name: String
        /// The archive's path.
        public var path: String
        /// Lines written since start.
        public var lines: Int
        /// Bytes written since start.
        public var bytes: Int
        /// Size rotations since start.
        public var rotations: Int
        /// Successful fsyncs since start.
        public var syncs: Int
        /// Failed opens, writes, rotations and syncs since start.
        public var failures: Int
    }

    /// One post scheduler and its outbox.
    public struct Poster: Sendable, Hashable, Codable {
        /// The subscriber's name.
        public var name: String
        /// Intents held in memory because the outbox refused them.
        public var held: Int
        /// Posts waiting or being sent, oldest first.
        public var pending: [Pending]
        /// Posts sent since start, by rule.
        public var sent: [String: Int]
        /// Posts given up since start, by rule.
        public var failed: [String: Int]
        /// Every rule's name.
        public var rules: [String]
    }

    /// One post waiting in an outbox.
    public struct Pending: Sendable, Hashable, Codable {
        /// Its idempotency key.
        public var key: String
        /// Its rule.
        public var rule: String
        /// The service it goes to.
        public var service: String
        /// When its intent was made.
        public var created: Date
    }

    /// The `/events` clients.
    public struct Streams: Sendable, Hashable, Codable {
        /// Connected now.
        public var clients: Int
        /// Dropped since start for not reading.
        public var dropped: Int
        /// Bytes of events held for them (the buffers being written and those filling), all
        /// clients together.
        public var bufferedBytes: Int = 0
        /// The most bytes one client holds now.
        public var largestClientBytes: Int = 0
        /// The most bytes one client held at once since start: never more than
        /// ``clientBufferLimit``.
        public var peakClientBytes: Int = 0
        /// The bound of bytes held for one client (0 where unknown).
        public var clientBufferLimit: Int = 0

        /// Counts of the stream's clients.
        public init(clients: Int, dropped: Int, bufferedBytes: Int = 0, largestClientBytes: Int = 0, peakClientBytes: Int = 0,
                    clientBufferLimit: Int = 0) {
            self.clients = clients
            self.dropped = dropped
            self.bufferedBytes = bufferedBytes
            self.largestClientBytes = largestClientBytes
            self.peakClientBytes = peakClientBytes
            self.clientBufferLimit = clientBufferLimit
        }

        private enum CodingKeys: String, CodingKey {
            case clients, dropped, bufferedBytes, largestClientBytes, peakClientBytes, clientBufferLimit
        }

        /// Reads what ``StatusReport/json()`` wrote; counts an older endpoint did not write are 0.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            clients = try container.decode(Int.self, forKey: .clients)
            dropped = try container.decode(Int.self, forKey: .dropped)
            bufferedBytes = try container.decodeIfPresent(Int.self, forKey: .bufferedBytes) ?? 0
            largestClientBytes = try container.decodeIfPresent(Int.self, forKey: .largestClientBytes) ?? 0
            peakClientBytes = try container.decodeIfPresent(Int.self, forKey: .peakClientBytes) ?? 0
            clientBufferLimit = try container.decodeIfPresent(Int.self, forKey: .clientBufferLimit) ?? 0
        }
    }
}

extension StatusReport {
    /// The JSON `/status` answers: keys sorted, dates in ISO 8601.
    public func json() -> Data {
        (try? Self.encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// Reads what ``json()`` wrote.
    public static func decode(_ data: Data) throws -> StatusReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: data)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
