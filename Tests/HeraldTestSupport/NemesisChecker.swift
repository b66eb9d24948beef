import Foundation

/// What a cluster run under a nemesis left behind, as the checker reads it: the sandbox's todos
/// and posts, the loads and post outcomes stored in the event stream, when each node took each
/// lease (its log), the loader states the state bucket stored (in revision order), the stream's
/// message ids and each daemon's exit status. Codable, so a failed run writes it out.
public struct NemesisHistory: Codable, Sendable {
    /// A load: `loader.<id>.finished` from `node` at `time` (the node's clock), announcing `items` as new.
    public struct Load: Codable, Sendable, Equatable {
        /// The loader's id.
        public var loader: String
        /// The node that announced it.
        public var node: String
        /// When (the event's time).
        public var time: Date
        /// The ids of the new items.
        public var items: [String]
        /// A load.
        public init(loader: String, node: String, time: Date, items: [String]) {
            self.loader = loader
            self.node = node
            self.time = time
            self.items = items
        }
    }

    /// `node` logged `cluster.lease.<loader>.acquired` at `time`.
    public struct Tenure: Codable, Sendable, Equatable {
        /// The loader's id.
        public var loader: String
        /// The node that took its lease.
        public var node: String
        /// When (the log line's time).
        public var time: Date
        /// A lease taken.
        public init(loader: String, node: String, time: Date) {
            self.loader = loader
            self.node = node
            self.time = time
        }
    }

    /// A post outcome stored in the stream: `post.<rule>.sent` (possibly a duplicate) or `.failed`.
    public struct Send: Codable, Sendable, Equatable {
        /// The node that reported it.
        public var node: String
        /// The intent's idempotency key.
        public var key: String
        /// Sent, as a duplicate the record or the service recognised.
        public var duplicate: Bool
        /// `post.<rule>.failed`.
        public var failed: Bool
        /// A post outcome.
        public init(node: String, key: String, duplicate: Bool, failed: Bool = false) {
            self.node = node
            self.key = key
            self.duplicate = duplicate
            self.failed = failed
        }
    }

    /// A loader state the state bucket stored at `revision`.
    public struct Save: Codable, Sendable, Equatable {
        /// The loader's id.
        public var loader: String
        /// The bucket's revision of the value.
        public var revision: UInt64
        /// The item ids seen (todos).
        public var seen: [String]
        /// The newest status id seen (timelines).
        public var sinceID: String?
        /// A stored state.
        public init(loader: String, revision: UInt64, seen: [String] = [], sinceID: String? = nil) {
            self.loader = loader
            self.revision = revision
            self.seen = seen
            self.sinceID = sinceID
        }
    }

    /// The texts that must each be posted exactly once (every todo present once the faults ended).
    public var expectedPosts: [String] = []
    /// Every text the posting rule may post (every todo at the end).
    public var allowedPosts: [String] = []
    /// The sandbox's posts, in order.
    public var posts: [String] = []
    /// Every load stored in the event stream.
    public var loads: [Load] = []
    /// Every lease taken, from the daemons' logs.
    public var tenures: [Tenure] = []
    /// Every post outcome stored in the event stream.
    public var sends: [Send] = []
    /// Every loader state the state bucket stored (as a consumer saw them).
    public var saves: [Save] = []
    /// Every `Nats-Msg-Id` stored in the event stream.
    public var storedIDs: [String] = []
    /// Each daemon's exit status after the final SIGTERM.
    public var exits: [String: Int32] = [:]

    /// An empty history.
    public init() {}
}

/// The checker of a run under a nemesis (Jepsen's shape): each guarantee of
/// Documentation/Cluster.md as a predicate over a ``NemesisHistory``; ``check(_:)`` returns one
/// line per violation (empty: the run kept every guarantee).
public enum NemesisChecker {
    /// Every violation in `history`.
    public static func check(_ history: NemesisHistory) -> [String] {
        posts(history) + states(history) + loads(history) + stream(history) + exits(history)
    }

    /// Every expected text posted exactly once, nothing else posted, no key sent twice (a
    /// duplicate the service recognised does not count), no post failed.
    static func posts(_ history: NemesisHistory) -> [String] {
        var problems: [String] = []
        let counts = Dictionary(history.posts.map { ($0, 1) }, uniquingKeysWith: +)
        for (text, count) in counts.sorted(by: { $0.key < $1.key }) where count > 1 {
            problems.append("posted \(count) times: \(text)")
        }
        for text in history.expectedPosts where counts[text] == nil {
            problems.append("never posted: \(text)")
        }
        let allowed = Set(history.allowedPosts)
        for text in Set(history.posts).subtracting(allowed).sorted() {
            problems.append("posted, not a todo: \(text)")
        }
        let sent = Dictionary(grouping: history.sends.filter { !$0.duplicate && !$0.failed }, by: \.key)
        for (key, sends) in sent.sorted(by: { $0.key < $1.key }) where sends.count > 1 {
            problems.append("key \(key) sent \(sends.count) times (by \(sends.map(\.node).joined(separator: ", ")))")
        }
        for send in history.sends where send.failed {
            problems.append("key \(send.key) failed on \(send.node)")
        }
        return problems
    }

    /// No stored state went backwards: a todo loader's later state keeps every id of the one
    /// before (the sandbox only adds todos), a timeline's `sinceID` never decreases.
    static func states(_ history: NemesisHistory) -> [String] {
        var problems: [String] = []
        for (loader, saves) in Dictionary(grouping: history.saves, by: \.loader).sorted(by: { $0.key < $1.key }) {
            let ordered = saves.sorted { $0.revision < $1.revision }
            for (previous, next) in zip(ordered, ordered.dropFirst()) {
                let lost = Set(previous.seen).subtracting(next.seen)
                if !lost.isEmpty {
                    problems.append("\(loader): the state at revision \(next.revision) lost \(lost.sorted()) seen at revision \(previous.revision)")
                }
                if let before = previous.sinceID.flatMap(Int64.init), (next.sinceID.flatMap(Int64.init) ?? Int64.min) < before {
                    problems.append("\(loader): sinceID went back from \(before) to \(next.sinceID ?? "none") at revision \(next.revision)")
                }
            }
        }
        return problems
    }

    /// The boundary Cluster.md states: every load comes from the node that took the lease last
    /// before it, and an item is announced again only in a new holder's first load.
    static func loads(_ history: NemesisHistory) -> [String] {
        var problems: [String] = []
        for (loader, loads) in Dictionary(grouping: history.loads, by: \.loader).sorted(by: { $0.key < $1.key }) {
            let tenures = history.tenures.filter { $0.loader == loader }.sorted { $0.time < $1.time }
            var announced: [String: Int] = [:]
            var loadsInTenure: [Int: Int] = [:]
            for load in loads.sorted(by: { $0.time < $1.time }) {
                guard let tenure = tenures.lastIndex(where: { $0.time <= load.time }) else {
                    problems.append("\(loader): a load by \(load.node) at \(load.time) before any node took the lease")
                    continue
                }
                if tenures[tenure].node != load.node {
                    problems.append("\(loader): \(load.node) loaded at \(load.time) while \(tenures[tenure].node) held the lease (since \(tenures[tenure].time))")
                }
                let position = loadsInTenure[tenure, default: 0]
                loadsInTenure[tenure] = position + 1
                for item in load.items {
                    if let first = announced[item], !(first < tenure && position == 0) {
                        problems.append("\(loader): item \(item) announced again by \(load.node) in load \(position + 1) of its tenure")
                    }
                    announced[item] = tenure
                }
            }
        }
        return problems
    }

    /// Every message id stored once.
    static func stream(_ history: NemesisHistory) -> [String] {
        Dictionary(history.storedIDs.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }.keys.sorted().map { "stream message \($0) stored more than once" }
    }

    /// Every daemon stopped by the final SIGTERM exited 0.
    static func exits(_ history: NemesisHistory) -> [String] {
        history.exits.sorted { $0.key < $1.key }.filter { $0.value != 0 }.map { "node \($0.key) exited \($0.value)" }
    }
}
