/// Pattern subscriptions indexed by token, so matching a topic visits only the branches its
/// tokens (and wildcards) lead to: the cost does not grow with subscriptions on unrelated topics.
struct PatternTrie {
    final class Node {
        var children: [String: Node] = [:]
        var one: Node?
        /// Subscriptions whose pattern ends at this node.
        var ending: [SubscriberRecord] = []
        /// Subscriptions whose pattern has `>` at this depth.
        var rest: [SubscriberRecord] = []

        var isEmpty: Bool { children.isEmpty && one == nil && ending.isEmpty && rest.isEmpty }
    }

    private let root = Node()
    private(set) var count = 0

    mutating func insert(_ record: SubscriberRecord, tokens: [TopicPattern.Token]) {
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
                node.rest.append(record)
                count += 1
                return
            }
        }
        node.ending.append(record)
        count += 1
    }

    @discardableResult
    mutating func remove(id: UInt64, tokens: [TopicPattern.Token]) -> Bool {
        let removed = Self.remove(id: id, tokens: tokens[...], from: root)
        if removed { count -= 1 }
        return removed
    }

    private static func remove(id: UInt64, tokens: ArraySlice<TopicPattern.Token>, from node: Node) -> Bool {
        guard let token = tokens.first else {
            guard let index = node.ending.firstIndex(where: { $0.id == id }) else { return false }
            node.ending.remove(at: index)
            return true
        }
        switch token {
        case .rest:
            guard let index = node.rest.firstIndex(where: { $0.id == id }) else { return false }
            node.rest.remove(at: index)
            return true
        case .one:
            guard let child = node.one, remove(id: id, tokens: tokens.dropFirst(), from: child) else { return false }
            if child.isEmpty { node.one = nil }
            return true
        case .literal(let text):
            guard let child = node.children[text], remove(id: id, tokens: tokens.dropFirst(), from: child) else { return false }
            if child.isEmpty { node.children[text] = nil }
            return true
        }
    }

    /// Every subscription whose pattern matches `tokens`, in no particular order.
    func match(_ tokens: [String], into result: inout [SubscriberRecord]) {
        Self.match(tokens, at: 0, node: root, into: &result)
    }

    private static func match(_ tokens: [String], at index: Int, node: Node, into result: inout [SubscriberRecord]) {
        if index == tokens.count {
            result.append(contentsOf: node.ending)
            return
        }
        result.append(contentsOf: node.rest)
        if let child = node.children[tokens[index]] {
            match(tokens, at: index + 1, node: child, into: &result)
        }
        if let child = node.one {
            match(tokens, at: index + 1, node: child, into: &result)
        }
    }
}
