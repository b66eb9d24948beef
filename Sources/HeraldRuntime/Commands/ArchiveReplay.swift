import Foundation
import Herald
import HeraldSandbox
import HeraldSubscribers

/// `herald replay`: runs a configuration's post rules over an archive's events (its rotated
/// files first, as `herald tail` reads them) and says what each would post: the rendered text
/// or object, the service, the idempotency key, and what the rule's outbox says of that key;
/// with ``askServices(_:)``, what the service says of it where it can be asked without posting.
/// With ``post(_:daemon:)`` the new ones are posted through the outbox, exactly once.
///
/// Lines that are not envelopes (corrupt, or a torn last line) are skipped and counted.
public struct ArchiveReplay: Sendable {
    /// A rule replayed, with the post subscriber it belongs to and its outbox.
    struct SelectedRule: Sendable {
        var subscriber: String
        var posting: PostingSettings
        var rule: PostRule
        var outbox: String
    }

    /// One post a rule makes of an archived event (or fails to make).
    public struct Candidate: Sendable, Hashable {
        /// When the event was published.
        public var time: Date
        /// Its topic.
        public var topic: String
        /// The post subscriber and its rule.
        public var subscriber: String
        /// The rule.
        public var rule: String
        /// The service it posts to.
        public var service: String
        /// The idempotency key (nil when rendering failed before one was made).
        public var key: String?
        /// What would be posted, in one line (or why nothing can be).
        public var content: String
        /// What the outbox says of the key: `pending`, `sent`, `failed`, or nil (not there: new).
        public var outbox: String?
        /// Whether the rule could not render the event.
        public var failed: Bool
        /// What the service says of the key, once asked (``ArchiveReplay/askServices(_:)``); nil
        /// when it was not asked.
        public var serviceAnswer: ServiceAnswer? = nil
        /// The BaaS bucket an object goes to (nil for other content), where the service is asked.
        var bucket: String? = nil
    }

    /// What a replay found.
    public struct Plan: Sendable {
        /// The files read, oldest first.
        public var files: [String]
        /// Lines skipped: not an envelope (corrupt) or torn.
        public var skipped: Int
        /// Envelopes in the window.
        public var events: Int
        /// The posts, in archive order.
        public var candidates: [Candidate]
        /// The envelopes in the window that some rule matches, in order (for ``ArchiveReplay/post(_:daemon:)``).
        var envelopes: [Envelope<any Event>]
    }

    let configuration: HeraldConfiguration
    let archive: String
    let window: ArchiveWindow
    let rules: [SelectedRule]

    /// A replay of `archive` through the rules of `configuration` (only `rule`, when given)
    /// within `window`.
    ///
    /// - Throws: ``DaemonError`` when `rule` names no post rule, or there is no post rule at all.
    public init(configuration: HeraldConfiguration, archive: String, rule: String? = nil, window: ArchiveWindow = ArchiveWindow())
        throws(DaemonError) {
        self.configuration = configuration
        self.archive = archive
        self.window = window
        var rules: [SelectedRule] = []
        for name in configuration.subscribers.keys.sorted() {
            guard case .post(let posting)? = configuration.subscribers[name] else { continue }
            let outbox = posting.outbox.map { ConfigLoader.resolve($0, against: configuration.directory) }
                ?? configuration.stateDirectory.appendingPathComponent("outbox").appendingPathComponent("\(name).jsonl")
            for postRule in posting.rules where rule == nil || postRule.name == rule {
                rules.append(SelectedRule(subscriber: name, posting: posting, rule: postRule, outbox: outbox.path))
            }
        }
        guard !rules.isEmpty else {
            let all = configuration.subscribers.values.flatMap { subscriber -> [String] in
                if case .post(let posting) = subscriber { posting.rules.map(\.name) } else { [] }
            }.sorted()
            if let rule { throw DaemonError("--rule \(rule): no post rule of that name" + (all.isEmpty ? " (the configuration has none)" : " (rules: \(all.joined(separator: ", ")))")) }
            throw DaemonError("the configuration has no post rule to replay")
        }
        self.rules = rules
    }

    /// Reads the archive and renders every rule over every event in the window; reads files
    /// (call it off the cooperative pool).
    public func plan() -> Plan {
        let reader = ArchiveReader(path: archive)
        let files = reader.files()
        var skipped = 0, events = 0
        var candidates: [Candidate] = []
        var envelopes: [Envelope<any Event>] = []
        var outboxes: [String: [String: String]] = [:]
        for rule in rules where outboxes[rule.outbox] == nil { outboxes[rule.outbox] = PostScheduler.outboxKeyStates(atPath: rule.outbox) }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            for line in reader.parse(data) {
                guard case .envelope(_, let text) = line, let envelope = ArchivedEvent.envelope(fromLine: text) else {
                    skipped += 1
                    continue
                }
                guard window.contains(envelope.timestamp) else { continue }
                events += 1
                let matching = rules.filter { $0.rule.pattern.matches(envelope.topic) }
                if !matching.isEmpty { envelopes.append(envelope) }
                for selected in matching {
                    candidates += Self.candidates(envelope, selected, outbox: outboxes[selected.outbox] ?? [:])
                }
            }
        }
        return Plan(files: files, skipped: skipped, events: events, candidates: candidates, envelopes: envelopes)
    }

    /// What the rules make of one envelope (`herald check --rule NAME --event FILE`); a rule
    /// whose pattern does not match its topic makes nothing.
    public func render(_ envelope: Envelope<any Event>) -> [Candidate] {
        rules.filter { $0.rule.pattern.matches(envelope.topic) }.flatMap { selected in
            Self.candidates(envelope, selected, outbox: PostScheduler.outboxKeyStates(atPath: selected.outbox))
        }
    }

    /// The patterns of the rules replayed.
    public var patterns: [String] { rules.map(\.rule.pattern.description) }

    private static func candidates(_ envelope: Envelope<any Event>, _ selected: SelectedRule, outbox: [String: String]) -> [Candidate] {
        let rule = selected.rule
        func candidate(key: String?, content: String, failed: Bool, bucket: String? = nil) -> Candidate {
            Candidate(time: envelope.timestamp, topic: envelope.topic.name, subscriber: selected.subscriber, rule: rule.name,
                      service: rule.service, key: key, content: content, outbox: key.flatMap { outbox[$0] }, failed: failed,
                      bucket: bucket)
        }
        let outcomes: [PostIntake.Outcome]
        do {
            outcomes = try PostIntake.outcomes(for: envelope, rule: rule, now: Date())
        } catch {
            return [candidate(key: nil, content: "cannot encode the event: \(error)", failed: true)]
        }
        return outcomes.map { outcome in
            switch outcome {
            case .intent(let intent):
                if case .object(let bucket, _) = intent.content {
                    candidate(key: intent.key, content: describe(intent.content), failed: false, bucket: bucket)
                } else {
                    candidate(key: intent.key, content: describe(intent.content), failed: false)
                }
            case .failed(let failure): candidate(key: failure.key, content: failure.reason, failed: true)
            }
        }
    }

    /// The rendered content in one line: `text "…"` (with its media), or `object in todos {…}`.
    static func describe(_ content: PostIntent.Content) -> String {
        switch content {
        case .status(let text, let media, let inReplyTo):
            return "text \(quoted(text))" + (media.map { " with media \($0)" } ?? "") + (inReplyTo.map { " in reply to \($0)" } ?? "")
        case .mastodonStatus(let status):
            return "text \(quoted(status.text))" + (status.media.map { " with media \($0)" } ?? "")
                + (status.inReplyTo.map { " in reply to \($0)" } ?? "")
        case .object(let bucket, let fields):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return "object in \(bucket) \(json)"
        case .webhook(let body):
            return "body \(body)"
        }
    }

    private static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
