/// A subscription's topic filter, in the NATS subject grammar: `*` matches exactly one token,
/// `>` (last token only) matches one or more trailing tokens.
///
/// `loader.*.failed` matches `loader.home.failed`; `loader.>` matches `loader.home.finished`
/// but not `loader`. Validation follows ``Topic``: `TopicPattern(validating:)` throws an
/// ``EventBusError`` with the reason; an invalid literal is refused by `subscribe`.
public struct TopicPattern: Sendable, Hashable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    enum Token: Sendable, Hashable {
        case literal(String)
        case one
        case rest
    }

    /// The pattern as written.
    public let pattern: String
    let parsed: Result<[Token], EventBusError>

    /// The pattern that matches every topic (`>`).
    public static let all: TopicPattern = ">"

    /// Makes a pattern, validating it.
    ///
    /// - Throws: ``EventBusError`` with code ``EventBusError/Code/invalidPattern``.
    public init(validating pattern: String) throws(EventBusError) {
        self.pattern = pattern
        self.parsed = TopicPattern.parse(pattern)
        if case .failure(let error) = parsed { throw error }
    }

    /// Makes a pattern from a literal; an invalid one is refused when used to subscribe.
    public init(stringLiteral value: String) {
        self.pattern = value
        self.parsed = TopicPattern.parse(value)
    }

    /// A pattern that matches exactly one topic.
    public init(_ topic: Topic) {
        self.pattern = topic.name
        self.parsed = topic.isValid
            ? .success(topic.tokens.map { .literal(String($0)) })
            : .failure(topic.validationError() ?? .invalidPattern(topic.name, reason: "invalid topic"))
    }

    /// Whether the pattern passed validation.
    public var isValid: Bool {
        if case .success = parsed { return true }
        return false
    }

    public var description: String { pattern }

    /// Whether `topic` matches this pattern. An invalid pattern or topic matches nothing.
    public func matches(_ topic: Topic) -> Bool {
        guard topic.isValid, case .success(let tokens) = parsed else { return false }
        let topicTokens = topic.tokens
        var index = 0
        for token in tokens {
            switch token {
            case .rest:
                return index < topicTokens.count
            case .one:
                guard index < topicTokens.count else { return false }
            case .literal(let text):
                guard index < topicTokens.count, topicTokens[index] == text else { return false }
            }
            index += 1
        }
        return index == topicTokens.count
    }

    public static func == (lhs: TopicPattern, rhs: TopicPattern) -> Bool { lhs.pattern == rhs.pattern }
    public func hash(into hasher: inout Hasher) { hasher.combine(pattern) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(validating: text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(pattern)
    }

    func validTokens() throws(EventBusError) -> [Token] {
        try parsed.get()
    }

    static func parse(_ pattern: String) -> Result<[Token], EventBusError> {
        func fail(_ reason: String) -> Result<[Token], EventBusError> {
            .failure(.invalidPattern(pattern, reason: reason))
        }
        if pattern.isEmpty { return fail("a pattern has at least one token") }
        let parts = pattern.split(separator: ".", omittingEmptySubsequences: false)
        var tokens: [Token] = []
        tokens.reserveCapacity(parts.count)
        for (offset, part) in parts.enumerated() {
            let position = offset + 1
            switch part {
            case "":
                return fail("token \(position) is empty")
            case "*":
                tokens.append(.one)
            case ">":
                guard offset == parts.count - 1 else {
                    return fail("'>' may only be the last token, found at token \(position) of \(parts.count)")
                }
                tokens.append(.rest)
            default:
                if let bad = part.unicodeScalars.first(where: Topic.isForbidden) {
                    let what = (bad == "*" || bad == ">")
                        ? "'\(bad)' inside a token (a wildcard must be a whole token)"
                        : Topic.describe(bad)
                    return fail("token \(position) ('\(part)') contains \(what)")
                }
                tokens.append(.literal(String(part)))
            }
        }
        return .success(tokens)
    }
}
