/// Values filed under topic patterns and found by topic, through the trie the bus routes its own
/// subscriptions with: matching a topic visits only the branches its tokens (and wildcards) lead
/// to, so patterns of other topics cost it nothing, however many there are.
///
/// For code that routes events to many pattern holders of its own (the status endpoint's
/// `/events` clients) instead of testing each pattern with ``TopicPattern/matches(_:)``.
///
/// A reference type, not `Sendable`: keep it behind the lock that guards its owner.
public final class TopicPatternIndex<Value> {
    private var trie = PatternTrie<Value>()

    /// An empty index.
    public init() {}

    /// Values filed, one per pattern they were filed under.
    public var count: Int { trie.count }

    /// Files `value` under `pattern` (a value may be filed under several patterns).
    ///
    /// - Throws: ``EventBusError`` (``EventBusError/Code/invalidPattern``) for an invalid pattern.
    public func insert(_ value: Value, for pattern: TopicPattern) throws(EventBusError) {
        trie.insert(value, tokens: try pattern.validTokens())
    }

    /// Removes the first value filed under `pattern` for which `matches` holds; false when none.
    @discardableResult
    public func remove(for pattern: TopicPattern, where matches: (Value) -> Bool) -> Bool {
        guard let tokens = try? pattern.validTokens() else { return false }
        return trie.remove(tokens: tokens, where: matches)
    }

    /// Appends every value filed under a pattern that matches `topic`, in no particular order
    /// (a value filed under two matching patterns comes twice); nothing for an invalid topic.
    ///
    /// - Returns: the trie nodes visited: the work the match took, which grows with the topic's
    ///   tokens and the patterns that share its branches, not with the patterns filed.
    @discardableResult
    public func match(_ topic: Topic, into result: inout [Value]) -> Int {
        guard topic.isValid else { return 0 }
        return trie.match(topic.tokens.map(String.init), into: &result)
    }
}
