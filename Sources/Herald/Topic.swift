#if canImport(FoundationEssentials)
import HeraldSync
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The name an event is published under: dot-separated tokens, as in NATS subjects
/// (`loader.home.finished`).
///
/// A topic is validated once, when it is made: tokens are non-empty and hold no white space,
/// no control characters, and no `*` or `>` (those belong to ``TopicPattern``).
/// `Topic(validating:)` throws an ``EventBusError`` that says what is wrong. A topic written as
/// a string literal is validated too, but cannot throw where it is written: an invalid literal
/// makes a topic that ``EventBus`` refuses, with the same error, when it is published.
///
/// Topics are interned: each distinct topic string gets a small process-wide number, so the
/// bus routes a published event without hashing its topic. The intern table lives as long as
/// the process, which suits topics named by code and configuration; do not make topics from
/// unbounded outside input.
public struct Topic: Sendable, Hashable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The process-wide intern number, or -1 when the topic is invalid.
    let index: Int32
    /// The interned name. Entries live as long as the process, so a topic holds no reference
    /// count: copying one (every publish does, several times) is a plain copy.
    let interned: Unmanaged<TopicName>

    /// The topic as written.
    public var name: String { interned._withUnsafeGuaranteedRef { $0.name } }

    /// Makes a topic, validating it.
    ///
    /// - Throws: ``EventBusError`` with code ``EventBusError/Code/invalidTopic`` naming the
    ///   offending token.
    public init(validating name: String) throws(EventBusError) {
        if let problem = Topic.problem(in: name) {
            throw EventBusError.invalidTopic(name, reason: problem)
        }
        self.init(TopicInterner.shared.intern(name, valid: true))
    }

    /// Makes a topic from tokens joined with dots (`Topic(tokens: "loader", id, "finished")`).
    public init(tokens: String...) throws(EventBusError) {
        try self.init(validating: tokens.joined(separator: "."))
    }

    /// Makes a topic from a literal. An invalid literal is refused when it is published or
    /// subscribed to; use ``init(validating:)`` to fail early.
    public init(stringLiteral value: String) {
        self.init(TopicInterner.shared.intern(value, valid: Topic.problem(in: value) == nil))
    }

    init(_ interned: Unmanaged<TopicName>) {
        self.interned = interned
        self.index = interned._withUnsafeGuaranteedRef { $0.index }
    }

    /// Whether the topic passed validation.
    public var isValid: Bool { index >= 0 }

    /// The dot-separated tokens.
    public var tokens: [Substring] { name.split(separator: ".", omittingEmptySubsequences: false) }

    public var description: String { name }

    // Every name is interned once, valid or not, so the same entry means the same name.
    public static func == (lhs: Topic, rhs: Topic) -> Bool {
        lhs.interned.toOpaque() == rhs.interned.toOpaque()
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(interned.toOpaque())
    }

    public static func < (lhs: Topic, rhs: Topic) -> Bool { lhs.name < rhs.name }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(validating: name)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// The validation error for `name`, or nil when it is a valid topic.
    func validationError() -> EventBusError? {
        Topic.problem(in: name).map { EventBusError.invalidTopic(name, reason: $0) }
    }

    static func problem(in name: String) -> String? {
        if name.isEmpty { return "a topic has at least one token" }
        var position = 0
        for token in name.split(separator: ".", omittingEmptySubsequences: false) {
            position += 1
            if token.isEmpty { return "token \(position) is empty" }
            if token == "*" || token == ">" {
                return "token \(position) is the wildcard '\(token)', which only patterns may use"
            }
            if let bad = token.unicodeScalars.first(where: Topic.isForbidden) {
                return "token \(position) ('\(token)') contains \(Topic.describe(bad))"
            }
        }
        return nil
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "*" || scalar == ">" || scalar.properties.isWhitespace
            || scalar.properties.generalCategory == .control
    }

    static func describe(_ scalar: Unicode.Scalar) -> String {
        if scalar == "*" || scalar == ">" { return "'\(scalar)'" }
        if scalar.properties.isWhitespace { return "white space" }
        return "a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))"
    }
}

/// One interned topic name. The interner keeps every entry for the life of the process.
final class TopicName: Sendable {
    let name: String
    /// The intern number of a valid topic, or -1.
    let index: Int32

    init(name: String, index: Int32) {
        self.name = name
        self.index = index
    }
}

/// The process-wide table of topic names, so routing can index by number and a topic is a
/// plain value.
final class TopicInterner: Sendable {
    static let shared = TopicInterner()

    private struct Table {
        var entries: [String: TopicName] = [:]
        var validCount: Int32 = 0
    }
    private let table = SyncLock(Table())

    /// The entry for `name`, made on first use. Valid names are numbered densely from 0.
    func intern(_ name: String, valid: Bool) -> Unmanaged<TopicName> {
        table.withLock { table in
            if let entry = table.entries[name] { return Unmanaged.passUnretained(entry) }
            var index: Int32 = -1
            if valid {
                index = table.validCount
                table.validCount += 1
            }
            let entry = TopicName(name: name, index: index)
            table.entries[name] = entry
            return Unmanaged.passUnretained(entry)
        }
    }
}
