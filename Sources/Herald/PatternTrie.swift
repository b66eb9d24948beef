/// Values filed by topic pattern, indexed by token, so matching a topic visits only the branches
/// its tokens (and wildcards) lead to: the cost does not grow with patterns of unrelated topics.
/// The bus files its subscriptions here; ``TopicPatternIndex`` is the same trie for other code.
struct PatternTrie<Value> {
    final class Node {
        var children: [String: Node] = [:]
        var one: Node?
        /// Values whose pattern ends at this node.
        var ending: [Value] = []
        /// Values whose pattern has `>` at this depth.
        var rest: [Value] = []

        var isEmpty: Bool { children.isEmpty && one == nil && ending.isEmpty && rest.isEmpty }
    }

    private let root = Node()
    private(set) var count = 0

    mutating func insert(_ value: Value, tokens: [TopicPattern.Token]) {
        var node = root
        for token in tokens {
            switch token {
            case .literal(let text):
                if let child = node.children[text] {
                    node = child
                } else {
                    let child = Node()
                    node.children[text] = child
                    node = child
                }
            case .one:
                if let child = node.one {
                    node = child
                } else {
                    let child = Node()
                    node.one = child
                    node = child
                }
            case .rest:
                node.rest.append(value)
                count += 1
                return
            }
        }
        node.ending.append(value)
        count += 1
    }

    /// Removes the first value filed under `tokens` for which `matches` holds; false when none.
    @discardableResult
    mutating func remove(tokens: [TopicPattern.Token], where matches: (Value) -> Bool) -> Bool {
        let removed = Self.remove(tokens: tokens[...], from: root, where: matches)
        if removed { count -= 1 }
        return removed
    }

    private static func remove(tokens: ArraySlice<TopicPattern.Token>, from node: Node, where matches: (Value) -> Bool) -> Bool {
        guard let token = tokens.first else {
            guard let index = node.ending.firstIndex(where: matches) else { return false }
            node.ending.remove(at: index)
            return true
        }
        switch token {
        case .rest:
            guard let index = node.rest.firstIndex(where: matches) else { return false }
            node.rest.remove(at: index)
            return true
        case .one:
            guard let child = node.one, remove(tokens: tokens.dropFirst(), from: child, where: matches) else { return false }
            if child.isEmpty { node.one = nil }
            return true
        case .literal(let text):
            guard let child = node.children[text], remove(tokens: tokens.dropFirst(), from: child, where: matches) else { return false }
            if child.isEmpty { node.children[text] = nil }
            return true
        }
    }

    /// Appends every value whose pattern matches `tokens`, in no particular order; returns the
    /// nodes visited (the work it took).
    @discardableResult
    func match(_ tokens: [String], into result: inout [Value]) -> Int {
        Self.match(tokens, at: 0, node: root, into: &result)
    }

    private static func match(_ tokens: [String], at index: Int, node: Node, into result: inout [Value]) -> Int {
        if index == tokens.count {
            result.append(contentsOf: node.ending)
            return 1
        }
        result.append(contentsOf: node.rest)
        var visited = 1
        if let child = node.children[tokens[index]] {
            visited += match(tokens, at: index + 1, node: child, into: &result)
        }
        if let child = node.one {
            visited += match(tokens, at: index + 1, node: child, into: &result)
        }
        return visited
    }
}
